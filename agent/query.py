"""The turn's search formed from the conversation: the latest line first, recent lines after.

A user's latest line often leans on what they said just before ("那要注意什麼？"), so searching
with it alone misses the memory the conversation is about; searching with the whole recent
dialogue instead finds more at depth 10 but loses the line's own best match at depth 1
(issue 15 item 4). So a turn runs two searches and fuses them with the latest line's ranks
weighted first: the latest line as it is, and the latest line's vector mixed with the vectors
of the user's last few lines (:func:`context_vector`; ``ConversationQuery.per_line``: each
its own query instead).

No embedding is added to the turn: the earlier lines' vectors are the query vectors their own
turns computed, kept per user by :class:`RecentVectors` (a line whose turn did not search, or
one said before a restart, is simply left out of the context).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.index.embedders import Vector
from memory.index.sources import KIND_MEMORY
from memory.search.results import SearchHit, SearchResult

# The drops a memory may come back from: the thresholds, and past the search's k (it passed
# them; Chinese cosines run higher, so more memories pass and were lost there). Not noise,
# status or folding.
_COME_BACK_FROM = frozenset({"min_score", "hard_min", "depth"})

# Query vectors kept per user (the session window shows at most a few user lines anyway).
PER_USER = 8
# Users whose recent vectors are kept; the least recently active are dropped past this.
MAX_USERS = 4096


@dataclass(frozen=True, slots=True)
class ConversationQuery:
    """How the conversation shapes the search (``turns`` 0 = the latest line alone).

    ``turns``: how many of the user's previous lines are context. ``weight``: what each of
    them weighs in the mixed vector, against 1.0 for the latest line. ``context_rank_weight``:
    how much a rank in the mixed search counts against the same rank in the latest line's
    search (1.0 since issue 32, MADial-Bench: 0.316 -> 0.321; it was 0.5).
    ``rank_offset``: the constant of the reciprocal-rank fusion (smaller = top ranks count
    more). Chosen on bench/conversation_recall.py (bench/RESULTS.md). ``joined_text``: the
    mixed search's keyword half looks for the user's recent lines together (:func:`context_text`)
    rather than the latest line alone: a conversation that talks *around* a memory names it
    across its lines (MADial-Bench, bench/RESULTS.md: memories found in the first 6 0.51 ->
    0.59). ``per_line``: the context search queries with the latest line's vector and each
    recent line's, a candidate keeping its best similarity, instead of one vector mixing
    them (``weight`` applies only when off). Off: measured through the bot (bench/RESULTS.md,
    issue 32) it moved MADial 0.543 -> 0.547 (0.561 when each line fetched its own
    candidates, but pre-LLM p95 1.59x the query embedding, over the 1.5x bar) and the zh
    set's prompt recall 0.988 -> 0.975.
    """

    turns: int = 3
    weight: float = 1.0
    context_rank_weight: float = 1.0
    rank_offset: float = 2.0
    joined_text: bool = True
    per_line: bool = False


class RecentVectors:
    """Each user's last query vectors, keyed by the line they embed (thread-safe)."""

    def __init__(self, per_user: int = PER_USER, max_users: int = MAX_USERS) -> None:
        self._per_user = per_user
        self._max_users = max_users
        self._users: OrderedDict[str, OrderedDict[str, Vector]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, user_key: str, text: str, vector: Vector) -> None:
        """Keep ``vector`` as the query vector of ``user_key``'s line ``text``."""
        with self._lock:
            lines = self._users.pop(user_key, None) or OrderedDict()
            self._users[user_key] = lines
            lines.pop(text, None)
            lines[text] = vector
            while len(lines) > self._per_user:
                lines.popitem(last=False)
            while len(self._users) > self._max_users:
                self._users.popitem(last=False)

    def lookup(self, user_key: str, texts: Sequence[str]) -> list[Vector]:
        """The kept vectors of ``texts`` (in their order); lines without one are skipped."""
        with self._lock:
            lines = self._users.get(user_key)
            if lines is None:
                return []
            return [lines[t] for t in texts if t in lines]

    def forget(self, user_key: str) -> None:
        """Drop everything kept for ``user_key`` (a new session starts without context)."""
        with self._lock:
            self._users.pop(user_key, None)


def context_vector(latest: Vector, context: Sequence[Vector], weight: float) -> Vector | None:
    """``latest`` plus ``weight`` times each of ``context``, L2-normalised.

    At ``weight`` 1.0 every recent line counts as much as the latest: a conversation that
    talks around a memory spreads it over its lines (MADial-Bench, bench/RESULTS.md: the
    share in the prompt 0.303 -> 0.321 over the mean of the earlier lines counted once).
    None when there is no context: the latest line's own search is the whole search then.
    """
    if not context or weight <= 0:
        return None
    total = np.sum(np.stack(context), axis=0)
    mixed = latest.astype(np.float32) + np.float32(weight) * total.astype(np.float32)
    norm = float(np.linalg.norm(mixed))
    if norm == 0.0:
        return None
    return (mixed / norm).astype(np.float32)


def context_text(latest: str, lines: Sequence[str], turns: int, max_chars: int) -> str:
    """The user's last ``turns`` earlier lines and ``latest``, one a line, cut to ``max_chars``.

    The keyword query of the mixed search; the latest line is kept whole, the oldest line is
    what a long conversation loses first.
    """
    earlier = [line.strip() for line in lines[-turns:] if line.strip()] if turns > 0 else []
    text = "\n".join([*earlier, latest.strip()])
    return text[-max_chars:] if len(text) > max_chars else text


def fuse(
    latest: Sequence[SearchHit],
    context: Sequence[SearchHit],
    k: int,
    config: ConversationQuery,
) -> list[SearchHit]:
    """The two searches' hits in one order: weighted reciprocal-rank fusion, latest first.

    A hit scores ``1 / (offset + rank)`` in the latest line's list plus
    ``context_rank_weight / (offset + rank)`` in the mixed list; ties keep the latest line's
    order. Each hit is the latest search's copy when it has one (its scores explain /why).
    """
    score: dict[int, float] = {}
    first: dict[int, tuple[int, SearchHit]] = {}
    for weight, hits in ((1.0, latest), (config.context_rank_weight, context)):
        for rank, hit in enumerate(hits, start=1):
            cid = hit.chunk.id
            score[cid] = score.get(cid, 0.0) + weight / (config.rank_offset + rank)
            first.setdefault(cid, (len(first), hit))
    order = sorted(first, key=lambda cid: (-score[cid], first[cid][0]))
    return [first[cid][1] for cid in order[:k]]


def with_memories_below(result: SearchResult, floor: float, share: float = 0.0) -> list[SearchHit]:
    """The search's hits, then the memories a threshold dropped whose fused score reaches
    ``floor`` and ``share`` of the best memory's fused score, best first (``floor`` 0 or
    less: the hits alone).

    A confirmed memory is what the person chose to keep, and the one a conversation talks
    around (a magic show for the Christmas-party dance) fuses under the thresholds that keep
    out unrelated log lines; after the hits, it can take a slot they leave. The cut is a
    score gap, not a fixed line: when one memory answers the message clearly (fused 0.7), the
    weak ones (0.25) stay out; when the conversation only talks around its memories, they
    all fuse low and close together, and come. Memories that passed the thresholds but stood
    past the search's k (listed as ``depth``) come the same way: MADial in Simplified Chinese,
    where more memories pass, lost 27% of the relevant ones there (0.543 -> 0.595 with them).
    """
    if floor <= 0:
        return list(result.hits)
    fused = [h.stages.get("fusion", h.score) for h in result.hits if h.chunk.kind == KIND_MEMORY]
    fused += [
        d.stages.get("fusion", d.score)
        for d in result.dropped
        if d.chunk.kind == KIND_MEMORY and d.stage in _COME_BACK_FROM
    ]
    best = max(fused, default=0.0)
    cut = max(floor, share * best)
    seen = {h.chunk.id for h in result.hits}
    below: dict[int, SearchHit] = {}
    for d in result.dropped:
        score = d.stages.get("fusion", d.score)
        if d.chunk.kind != KIND_MEMORY or d.stage not in _COME_BACK_FROM or score < cut:
            continue
        if d.chunk.id in seen or d.chunk.id in below:
            continue
        below[d.chunk.id] = SearchHit(
            chunk=d.chunk,
            score=score,
            vector_similarity=d.stages.get("similarity"),
            bm25_rank=None,
            stages=dict(d.stages),
        )
    return [*result.hits, *sorted(below.values(), key=lambda h: -h.score)]


def rank_fusion(
    scores: Sequence[npt.NDArray[np.float32]], offset: float
) -> npt.NDArray[np.float64]:
    """Reciprocal-rank fusion of score lists over the same items: each item's sum of
    ``1 / (offset + rank)``, its rank 1 for the best score of a list (ties: the first)."""
    total = np.zeros(len(scores[0]) if scores else 0)
    for sims in scores:
        ranks = np.empty(len(sims))
        ranks[np.argsort(-np.asarray(sims), kind="stable")] = np.arange(1, len(sims) + 1)
        total += 1.0 / (offset + ranks)
    return total


def memory_order(
    hits: Sequence[SearchHit],
    views: Mapping[int, Vector],
    latest: Vector,
    context: Sequence[Vector],
    weight: float,
    rank_offset: float,
    mixed_views: Mapping[int, Vector] | None = None,
    background: Vector | None = None,
) -> list[SearchHit]:
    """``hits`` with the memories among them in a better order, every other hit in place.

    The memories a conversation talks around are many and fuse close together, and the
    search's order among them (threshold tiers, then fused scores) is a weak one alone. Here
    they are ordered by reciprocal-rank fusion of three lists: their views' cosines
    (:mod:`memory.index.views`) to the latest line mixed with the recent ones
    (:func:`context_vector`), the best of their cosines to any one of those lines, and the
    search's own order (it carries the keywords: Chinese memories of a few characters are
    found by them). MADial-Bench through the bot (bench/RESULTS.md): the share in the prompt
    0.543 -> 0.628; the latest line's own cosine as a fourth list lowers it (0.615), and
    without the search's order the zh set loses a question (1.000 -> 0.975).
    A memory without a view keeps its place.

    ``mixed_views``: the views the mixed list compares instead, where a memory has one (a
    Traditional Chinese memory's Simplified view, :mod:`memory.index.views`), against the
    lines as written: MADial in Traditional Chinese 0.541 -> 0.572, with no second embedding
    of the turn (its line folded too gave 0.553, bench/RESULTS.md). The best-line list stays
    on the views as written (both lists folded cost the zh set two questions, 1.000 -> 0.963:
    a memory half in English loses to Chinese ones).

    ``background``: the person's usual line (:mod:`agent.background`), taken out of the latest
    line and the recent ones before both cosine lists compare them: a memory near everything
    the person says is no sign of this turn (MADial through the bot, Simplified Chinese
    0.578 -> 0.620, Traditional 0.575 -> 0.612, English 0.662 -> 0.661). None: as they are.
    """
    slots = [i for i, h in enumerate(hits) if h.chunk.id in views]
    if len(slots) < 2:
        return list(hits)
    mems = [hits[i] for i in slots]
    matrix = np.stack([views[h.chunk.id] for h in mems]).astype(np.float32)
    lines = np.stack([latest, *context]).astype(np.float32)
    mixed = context_vector(latest, context, weight)
    if background is not None:
        usual = background.astype(np.float32)
        lines = lines - usual
        mixed = None if mixed is None else mixed - usual
    lists = [np.max(matrix @ lines.T, axis=1), -np.arange(len(mems), dtype=np.float32)]
    if mixed_views:
        matrix = np.stack([mixed_views.get(h.chunk.id, views[h.chunk.id]) for h in mems])
    if mixed is not None:
        lists.append(matrix.astype(np.float32) @ mixed)
    order = np.argsort(-rank_fusion(lists, rank_offset), kind="stable")
    out = list(hits)
    for slot, i in zip(slots, order, strict=True):
        out[slot] = mems[int(i)]
    return out
