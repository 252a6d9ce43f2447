"""Hybrid search over one user's index: sqlite-vec KNN + FTS5 BM25, fusion, staged scoring.

Pipeline (docs/retrieval.md, "Staged scoring"): both retrievers over-fetch candidates (BM25 on
the query's selective keywords only, :func:`memory.index.text.selective_terms`); every
candidate gets its true cosine similarity to the query (BM25-only candidates included, from
their stored vectors), calibrated to the embedder as ``sim' = max(0, (cos - floor) / (1 -
floor))`` (floor 0.7 for e5, 0 for Ollama's models; :func:`memory.search.scoring.calibrate`);
fusion ("vector_bonus" = a "vector score +15% on a BM25 hit", "weighted" = ``0.7*sim' +
0.3*bm25/best_bm25``, or true "rrf"); the session lift (log candidates in the stretch of a
matching idle summary, :mod:`memory.search.sessions`); the neighbour lift (records near the
best matches in the same day's log); ``min_score`` drop; recency boost, importance weight,
length normalisation, time decay; ``hard_min_score`` drop; noise filter; the retrieval score
(relevance, recency, access count, user weight: :func:`memory.search.scoring.retrieval_score`,
signals from a :class:`memory.search.signals.SignalSource`) and the low-priority demotion;
folding (one hit per thing said, a confirmed memory before its copies:
:mod:`memory.search.folding`); MMR; top k, best score first.
:meth:`HybridSearcher.search_explained` also returns which stage dropped which candidate, so
``pcai search --explain`` can show both.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

import numpy as np
import numpy.typing as npt

from memory.base.markdown import MemoryStatus
from memory.config import RetrievalConfig
from memory.index.chunks import Chunk, IndexStore
from memory.index.embedders import Embedder, similarity_floor
from memory.index.sources import KIND_LOG, KIND_MEMORY, KIND_SUMMARY, LOG_CONTEXT_SPAN
from memory.index.text import keyword_terms, selective_terms
from memory.index.veccache import nearest_within
from memory.search import scoring
from memory.search.folding import fold_candidates
from memory.search.neighbours import best_of as _best
from memory.search.neighbours import neighbour_lift
from memory.search.pool import CandidatePool
from memory.search.replies import asks, reply_lift
from memory.search.results import Dropped, SearchHit, SearchResult
from memory.search.sessions import session_lift
from memory.search.signals import EntrySignal, SignalSource
from memory.search.when import Days, fits, named_days

SEARCHABLE = (MemoryStatus.ACTIVE, MemoryStatus.LOW_PRIORITY)
NEUTRAL = EntrySignal()
# The BM25 half of a search runs here while the caller embeds the query (:meth:`start_text`).
_TEXT = ThreadPoolExecutor(max_workers=4, thread_name_prefix="pcai-bm25")
_TEXT_KEEP = 32  # started text searches nobody used are dropped past this
# A query of several lines (a pasted dialogue) is also searched line by line, at most this many
# of its last lines: one vector for the whole blurs the line a memory fits (MADial-Bench).
LINE_QUERIES = 12
# ... and its BM25 part weighs this share of the usual weight: the dozen rarest words of a whole
# dialogue match memories by chance more than one line's words do (MADial-Bench: BM25
# weight 0.3 / 0.2 / 0.15 / 0.1 / 0 gave search R@5 0.520 / 0.554 / 0.558 / 0.553 / 0.478).
LINE_BM25_SHARE = 0.5
_SPEAKER = re.compile(r"^[^:：\n]{1,40}[:：]\s*")  # "Bart: " / "小明：" before a line


def query_lines(query: str, limit: int = LINE_QUERIES) -> list[str]:
    """The lines of a multi-line ``query`` worth a vector each, a speaker's name taken off
    ("Bart: I get nervous" -> "I get nervous"); none for a query of one line."""
    lines = [_SPEAKER.sub("", line).strip() for line in query.splitlines()]
    lines = list(dict.fromkeys(line for line in lines if line))
    return lines[-limit:] if len(lines) > 1 else []


@dataclass(slots=True)
class _Cand:
    chunk: Chunk
    sim: float
    bm25_rank: int | None
    bm25_norm: float
    vec_rank: int | None
    vector: npt.NDArray[np.float32] | None
    stages: dict[str, float] = field(default_factory=dict)
    score: float = 0.0


class HybridSearcher:
    """Vector + BM25 search with the staged scoring pipeline."""

    def __init__(
        self,
        store: IndexStore,
        embedder: Embedder,
        config: RetrievalConfig,
        signals: SignalSource | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.floor = similarity_floor(embedder)
        self._ahead: OrderedDict[tuple[str, str], tuple[int, Future[list[tuple[int, float]]]]]
        self._ahead = OrderedDict()  # (user, query) -> (depth, its BM25 half, started early)
        self._ahead_lock = threading.Lock()
        self.signals = signals  # None: every memory counts as never used, default weight

    def search(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        now: datetime | None = None,
        statuses: tuple[str, ...] = SEARCHABLE,
    ) -> list[SearchHit]:
        """Return the best ``k`` chunks of ``user_key`` for ``query`` as of ``now``."""
        return self.search_explained(user_key, query, k, now=now, statuses=statuses).hits

    def search_explained(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        now: datetime | None = None,
        statuses: tuple[str, ...] = SEARCHABLE,
    ) -> SearchResult:
        """Like :meth:`search`, also reporting dropped candidates and timings."""
        self.start_text(user_key, query, k)  # BM25 runs while the query is embedded
        t0 = time.perf_counter()
        qvec = self.embedder.embed_query(query) if query.strip() else None
        lines = [self.embedder.embed_query(line) for line in query_lines(query)]
        embed_ms = (time.perf_counter() - t0) * 1000.0
        result = self.search_with_vector(
            user_key, query, qvec, k, now=now, statuses=statuses, line_vectors=lines
        )
        return SearchResult(result.hits, result.dropped, embed_ms, result.search_ms)

    def start_text(self, user_key: str, query: str, k: int | None = None) -> None:
        """Begin the BM25 half of a search for ``query`` now, in the background.

        The next search of the same user and query (for at most ``k`` hits) uses it, so the
        caller's wait for the query's embedding covers it: with a second core a turn waits
        for the slower of the two, not their sum.
        """
        depth = self._depth(k)
        with self._ahead_lock:
            started = self._ahead.get((user_key, query))
            if started is not None and started[0] >= depth:
                return
            self._ahead[(user_key, query)] = (
                depth,
                _TEXT.submit(self._text, user_key, query, depth),
            )
            while len(self._ahead) > _TEXT_KEEP:
                self._ahead.popitem(last=False)

    def _text(self, user_key: str, query: str, depth: int) -> list[tuple[int, float]]:
        return self.store.fts_search(user_key, self._match(user_key, query), depth)

    def _text_hits(self, user_key: str, query: str, depth: int) -> list[tuple[int, float]]:
        """The BM25 candidates: the ones :meth:`start_text` began, else fetched now."""
        with self._ahead_lock:
            started = self._ahead.pop((user_key, query), None)
        if started is not None and started[0] >= depth:
            return started[1].result()[:depth]  # best first: a longer list starts the same
        return self._text(user_key, query, depth)

    def text_hits(
        self, user_key: str, query: str, k: int | None = None
    ) -> list[tuple[int, float]]:
        """The BM25 candidates of a search for ``query`` (at most ``k`` hits), to hand to
        several :meth:`search_with_vector` calls with different vectors (one FTS query)."""
        return self._text_hits(user_key, query, self._depth(k))

    def _depth(self, k: int | None) -> int:
        """How many candidates each retriever fetches for a top ``k``."""
        cfg = self.config
        return max((k or cfg.top_k) * cfg.candidate_multiplier, cfg.min_candidates)

    def search_with_vector(
        self,
        user_key: str,
        query: str,
        qvec: npt.NDArray[np.float32] | None,
        k: int | None = None,
        *,
        now: datetime | None = None,
        statuses: tuple[str, ...] = SEARCHABLE,
        text_hits: list[tuple[int, float]] | None = None,
        pool: CandidatePool | None = None,
        line_vectors: list[npt.NDArray[np.float32]] | None = None,
    ) -> SearchResult:
        """Run the pipeline with an already-embedded query (the turn embeds it once).

        ``statuses`` are the entry statuses searched: the live ones, unless a caller looks at
        history (``/history`` finds deprecated versions too). ``text_hits``: the query's BM25
        candidates from :meth:`text_hits`, and ``pool`` what their chunks cost to fetch and
        judge, when the caller searches it with several vectors. ``line_vectors``: the
        vectors of a multi-line query's lines (:func:`query_lines`); each fetches its own
        nearest chunks, and a candidate's similarity is its best cosine to the whole query or
        any line.
        """
        t0 = time.perf_counter()
        cfg = self.config
        k = k or cfg.top_k
        now = now or datetime.now().astimezone()
        depth = self._depth(k)
        vec_hits: list[tuple[int, float]] = []
        if qvec is not None:
            # The user's matrix first (it takes the store's lock, which BM25 holds while it
            # runs), then BM25 on another core while numpy scans it: the search waits for the
            # slower of the two, not their sum. A turn began BM25 earlier (start_text).
            loaded = self.store.user_vectors(user_key)
            if text_hits is None:
                self.start_text(user_key, query, k)
            vec_hits = self.store.vec_search(user_key, qvec, depth, loaded)
            for lvec in line_vectors or []:
                vec_hits += self.store.vec_search(user_key, lvec, depth, loaded)
            if cfg.memory_candidates > 0:
                vec_hits += self._memories(user_key, loaded, [qvec, *(line_vectors or [])])
            if line_vectors:
                # The depth nearest by their best cosine to any vector, as many as one vector
                # fetches: each candidate costs a fetch and the stages (a turn's time).
                nearest: dict[int, float] = {}
                for cid, dist in vec_hits:
                    nearest[cid] = min(dist, nearest.get(cid, dist))
                vec_hits = sorted(nearest.items(), key=lambda h: h[1])[:depth]
            qvec = np.stack([qvec, *line_vectors]) if line_vectors else qvec
        if text_hits is None:
            fts_hits = self._text_hits(user_key, query, depth)
        else:
            fts_hits = text_hits[:depth]
        pool = pool if pool is not None else CandidatePool(self.store, user_key)
        cands = self._candidates(pool, vec_hits, fts_hits, qvec)
        dropped: list[Dropped] = []
        live: list[_Cand] = []
        below: list[_Cand] = []  # memories under a threshold: a copy that passed brings them
        signals = pool.signals(self.signals) if self.signals is not None and cands else {}
        named = named_days(query, now) if cfg.date_weight > 0 else None
        # A multi-line query's BM25 part weighs less (LINE_BM25_SHARE).
        bm25_weight = cfg.bm25_weight * (LINE_BM25_SHARE if line_vectors else 1.0)
        for c in cands:
            c.score = self._fuse(c, bm25_weight)
        if cfg.session_hits > 0 and cfg.session_weight > 0:
            self._sessions(cands, statuses)
        orders: dict[str, list[int]] = {}  # the files the lifts and MMR read, each read once
        lift = partial(self._log_lift, pool, qvec=qvec, statuses=statuses, orders=orders)
        if cfg.neighbour_hits > 0 and cfg.neighbour_share > 0:
            # The records next to the best fused matches (memory.search.neighbours).
            near = partial(neighbour_lift, span=cfg.neighbour_span, share=cfg.neighbour_share)
            cands += lift(cands, cfg.neighbour_hits, near, bm25_weight)
        if cfg.reply_hits > 0 and cfg.reply_share > 0:
            # After the neighbour lift: a question it lifted lifts its reply too
            # (memory.search.replies).
            answer = partial(reply_lift, share=cfg.reply_share)
            cands += lift(cands, cfg.reply_hits, answer, bm25_weight, keep=asks)
        for c in cands:
            if c.chunk.status not in statuses:
                dropped.append(Dropped(c.chunk, "status", 0.0, f"status {c.chunk.status}"))
                continue
            c.stages["fusion"] = c.score
            if not scoring.passes_min(c.score, cfg.min_score):
                dropped.append(self._drop(c, "min_score", f"< min_score {cfg.min_score}"))
                below += [c] if c.chunk.kind == KIND_MEMORY else []
                continue
            c.stages.update(
                scoring.apply_stages(
                    c.score,
                    age=pool.age(c.chunk, now),
                    importance=c.chunk.importance,
                    length=len(c.chunk.text),
                    recency_half_life=cfg.recency_half_life_days,
                    recency_weight=cfg.recency_weight,
                    length_anchor=cfg.length_norm_anchor,
                    decay_half_life=cfg.time_decay_half_life_days,
                )
            )
            c.score = c.stages["decay"]
            if not scoring.passes_min(c.score, cfg.hard_min_score):
                dropped.append(self._drop(c, "hard_min", f"< hard_min_score {cfg.hard_min_score}"))
                below += [c] if c.chunk.kind == KIND_MEMORY else []
                continue
            if cfg.filter_noise:
                why = pool.noise(c.chunk)
                if why:
                    dropped.append(self._drop(c, "noise", why))
                    continue
            self._rank(c, signals, pool.age(c.chunk, now))
            if named is not None:
                self._date(c, named)
            live.append(c)
        live = fold_candidates(live, below, dropped, self._drop, limit=k)
        mmr = scoring.mmr_demote(
            [c.score for c in live],
            [c.vector for c in live],
            cfg.mmr_threshold,
            limit=k,
            shared_context=self._shared_context(pool.user_key, live, orders),
        )
        # MMR chooses which k; they are listed best score first (a demoted one that made it
        # into the k stands where its score puts it, as every front end shows the scores).
        order = mmr.kept + sorted(mmr.demoted, key=lambda i: live[i].score, reverse=True)
        order = sorted(order[:k], key=lambda i: -live[i].score) + order[k:]
        listed = set(order)
        for i, c in enumerate(live):  # past the k (MMR stopped before them): still named
            if i not in listed and c.chunk.kind == KIND_MEMORY:
                dropped.append(self._drop(c, "depth", f"past the first {k}"))
        hits: list[SearchHit] = []
        for pos, i in enumerate(order):
            c = live[i]
            # MMR reorders rather than rescores: the stage's score is the score it kept, and a
            # demoted near-duplicate that falls out of the top k is listed among the drops.
            c.stages["mmr"] = c.score
            if pos >= k:
                if i in mmr.demoted:
                    dup = live[mmr.demoted[i]].chunk.id
                    dropped.append(self._drop(c, "mmr", f"near-duplicate of chunk {dup}"))
                continue
            hits.append(
                SearchHit(
                    chunk=c.chunk,
                    score=c.score,
                    vector_similarity=c.sim,
                    bm25_rank=c.bm25_rank,
                    stages=dict(c.stages),
                )
            )
        return SearchResult(hits, dropped, 0.0, (time.perf_counter() - t0) * 1000.0)

    # -- helpers -----------------------------------------------------------------------
    def _memories(
        self,
        user_key: str,
        loaded: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]],
        vectors: list[npt.NDArray[np.float32]],
    ) -> list[tuple[int, float]]:
        """The person's confirmed memories nearest each vector (``memory_candidates`` each):
        candidates of their own, so a long daily log cannot crowd them out of the depth."""
        ids, matrix = loaded
        mine = self.store.memory_ids(user_key)
        if not len(mine) or len(mine) == len(ids):
            return []  # no memories, or nothing but memories: the depth fetched them already
        want = self.config.memory_candidates
        return [hit for vec in vectors for hit in nearest_within(ids, matrix, vec, want, mine)]

    def _rank(self, c: _Cand, signals: Mapping[str, EntrySignal], age: float | None) -> None:
        """The retrieval score, then the low-priority demotion: the final order."""
        cfg = self.config
        sig = signals.get(c.chunk.unit_id, NEUTRAL) if c.chunk.kind == KIND_MEMORY else NEUTRAL
        c.score = scoring.retrieval_score(
            c.score,
            scoring.signal_recency(age, cfg.signal_recency_rate),
            scoring.access_frequency(sig.access_count),
            scoring.weight_factor(sig.user_weight),
        )
        c.stages["retrieval"] = c.score
        c.score = scoring.priority_factor(c.score, c.chunk.status, cfg.low_priority_factor)
        c.stages["priority"] = c.score

    def _date(self, c: _Cand, named: Days) -> None:
        """The time-word stage: a hit dated in the days the query names (or the slack days
        after) gains ``date_weight`` (:mod:`memory.search.when`)."""
        cfg = self.config
        if fits(c.chunk.date, named, cfg.date_slack_days):
            c.score += cfg.date_weight
        c.stages["date"] = c.score

    def _sessions(self, cands: list[_Cand], statuses: tuple[str, ...]) -> None:
        """Lift the candidate records of the best matching idle summaries' stretches
        (:mod:`memory.search.sessions`), before the neighbour lift spreads them."""
        cfg = self.config
        best = _best(cands, KIND_SUMMARY, statuses, cfg.session_hits)
        if best:
            records = [(c.chunk.id, c.chunk.date) for c in cands if c.chunk.kind == KIND_LOG]
            summaries = [(c.chunk.section, c.score) for c in best]
            gain = session_lift(summaries, records, cfg.session_weight)
            for c in cands:
                c.score += gain.get(c.chunk.id, 0.0)

    def _log_lift(
        self,
        pool: CandidatePool,
        cands: list[_Cand],
        hits: int,
        lift: Callable[[list[tuple[int, str, float]], dict[str, list[int]]], dict[int, float]],
        bm25_weight: float,
        *,
        qvec: npt.NDArray[np.float32] | None,
        statuses: tuple[str, ...],
        orders: dict[str, list[int]],
        keep: Callable[[str], bool] | None = None,
    ) -> list[_Cand]:
        """Raise the records ``lift`` names from the ``hits`` best daily-log records (those
        ``keep`` takes by their text), given as ``(chunk id, path, fused score)`` with their
        files' record order; returns the ones that were no candidates yet.

        Only records that are no noise start a lift: a greeting or a bare question that
        matches the query words lifted unrelated lines next to it, which came and went as
        lines were logged (issue 24: the same query gave 5 results, minutes later 1).
        """
        noise = pool.noise if self.config.filter_noise else None
        best = _best(cands, KIND_LOG, statuses, hits, noise)
        best = [c for c in best if keep is None or keep(c.chunk.text)]
        if not best:
            return []
        self._read_orders(pool.user_key, [c.chunk.path for c in best], orders)
        order = {c.chunk.path: orders[c.chunk.path] for c in best}
        matches = [(c.chunk.id, c.chunk.path, c.score) for c in best]
        return self._lifted(pool, cands, lift(matches, order), qvec, bm25_weight)

    def _read_orders(self, user_key: str, paths: list[str], orders: dict[str, list[int]]) -> None:
        """Add the record order of each of these files not in ``orders`` yet (one read a search:
        both lifts and MMR read the same days)."""
        missing = [p for p in dict.fromkeys(paths) if p not in orders]
        if missing:
            orders.update(self.store.file_order(user_key, missing))

    def _shared_context(
        self, user_key: str, live: list[_Cand], orders: dict[str, list[int]]
    ) -> Callable[[int, int], bool]:
        """Whether two of ``live`` are records of one day's log near enough to be embedded
        with each other as context (:data:`LOG_CONTEXT_SPAN`): their vectors are close by
        construction, so MMR must not take one for a copy of the other (LoCoMo: every one of
        570 demotions was a record and the next one, said by the other person)."""

        places: dict[str, dict[int, int]] = {}  # a file's records: chunk id -> place

        def shared(i: int, j: int) -> bool:
            a, b = live[i].chunk, live[j].chunk
            if a.kind != KIND_LOG or b.kind != KIND_LOG or a.path != b.path:
                return False
            if a.path not in places:
                self._read_orders(user_key, [a.path], orders)
                places[a.path] = {cid: n for n, cid in enumerate(orders[a.path])}
            where = places[a.path]
            if a.id not in where or b.id not in where:
                return False
            return abs(where[a.id] - where[b.id]) <= LOG_CONTEXT_SPAN

        return shared

    def _lifted(
        self,
        pool: CandidatePool,
        cands: list[_Cand],
        lift: dict[int, float],
        qvec: npt.NDArray[np.float32] | None,
        bm25_weight: float,
    ) -> list[_Cand]:
        """Raise known candidates to their lifted score; fetch the others as new candidates
        (with their stored vectors), scored at least their lift."""
        known = {c.chunk.id: c for c in cands}
        for cid, score in lift.items():
            if cid in known:
                known[cid].score = max(known[cid].score, score)
        fresh = [(cid, 0.0) for cid in lift if cid not in known]
        new = self._candidates(pool, fresh, [], qvec)
        for c in new:
            c.vec_rank = None
            c.score = max(self._fuse(c, bm25_weight), lift[c.chunk.id])
        return new

    def _candidates(
        self,
        pool: CandidatePool,
        vec_hits: list[tuple[int, float]],
        fts_hits: list[tuple[int, float]],
        qvec: npt.NDArray[np.float32] | None,
    ) -> list[_Cand]:
        vec_rank: dict[int, int] = {}
        if qvec is not None and qvec.ndim > 1:  # several query vectors: a chunk's best rank
            vec_hits = sorted(vec_hits, key=lambda h: h[1])
        for r, (cid, _) in enumerate(vec_hits, start=1):
            vec_rank.setdefault(cid, r)
        bm25_rank = {cid: r for r, (cid, _) in enumerate(fts_hits, start=1)}
        best = fts_hits[0][1] if fts_hits else 0.0
        # FTS5's bm25() is negative, better = more negative: score / best lies in (0, 1].
        bm25_norm = {cid: (s / best if best < 0 else 0.0) for cid, s in fts_hits}
        ids = list(dict.fromkeys([*vec_rank, *bm25_rank]))
        chunks, vectors = pool.fetch(ids)
        out = []
        for cid in ids:
            chunk = chunks.get(cid)
            if chunk is None:
                continue
            vec = vectors.get(cid)
            sim = 0.0
            if qvec is not None and vec is not None:
                # A stack of query vectors (a multi-line query): the best cosine of any.
                sim = float(np.dot(qvec, vec)) if qvec.ndim == 1 else float(np.max(qvec @ vec))
            out.append(
                _Cand(
                    chunk=chunk,
                    sim=sim,
                    bm25_rank=bm25_rank.get(cid),
                    bm25_norm=bm25_norm.get(cid, 0.0),
                    vec_rank=vec_rank.get(cid),
                    vector=vec,
                )
            )
        return out

    def _match(self, user_key: str, query: str) -> str:
        """The FTS5 MATCH: the query's keywords minus the near-stopwords of the user's index."""
        terms = keyword_terms(query)
        if not terms:
            return ""
        cfg = self.config
        if cfg.fts_max_df_ratio > 0 or 0 < cfg.fts_max_terms < len(terms):
            counts, rows = self.store.doc_counts(user_key, terms)
            terms = selective_terms(
                terms,
                counts,
                rows,
                cfg.fts_max_df_ratio,
                cfg.fts_max_terms,
                cfg.fts_common_min_rows,
                cfg.fts_max_rows,
            )
        return " OR ".join(terms)

    def _fuse(self, c: _Cand, bm25_weight: float) -> float:
        cfg = self.config
        if cfg.fusion == "rrf":
            return scoring.fuse_rrf([c.vec_rank, c.bm25_rank], cfg.rrf_k)
        sim = scoring.calibrate(c.sim, self.floor)
        c.stages["similarity"] = sim
        if cfg.fusion == "weighted":
            return scoring.fuse_weighted(sim, c.bm25_norm, cfg.vector_weight, bm25_weight)
        return scoring.fuse_vector_bonus(sim, c.bm25_rank is not None, cfg.bm25_hit_bonus)

    @staticmethod
    def _drop(c: _Cand, stage: str, reason: str) -> Dropped:
        return Dropped(c.chunk, stage, c.score, reason, dict(c.stages))
