"""What the pipeline reads of a user's memory for one turn (steps 5-7).

Gathers the layer candidates (L0/L1 from MEMORY.md, L2 from hybrid search narrowed by
section gating, short-term rows) and hands them to the pure functions of
:mod:`agent.selection`. MEMORY.md is parsed once per change (keyed by :func:`file_stamp`), so
a user with 10,000 memories does not pay for a parse on every message. A file that cannot be
read raises :class:`~memory.errors.UnreadableFileError` (never a bare ``UnicodeDecodeError``):
the pipeline answers without it and tells the user once, with :func:`file_problem_notice`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from agent.background import LineBackground
from agent.query import (
    ConversationQuery,
    RecentVectors,
    context_text,
    context_vector,
    fuse,
    memory_order,
    with_memories_below,
)
from agent.sections import SectionMatcher, section_descriptions
from agent.selection import (
    L2,
    LOG_SUMMARY_PREFIX,
    Candidate,
    Selection,
    core_layer,
    entry_candidate,
    fallback_candidate,
    fit_summaries,
    gate_sections,
    memories_first,
    scope_layer,
    scope_name,
    select,
)
from agent.texts import error_text
from history.sessions import ROLE_USER, Message
from history.topic_index import TopicIndex, dominant_section, sections_to_query
from memory.base.guards import mask
from memory.base.lru import PoolCache
from memory.base.markdown import Entry, MemoryDocument
from memory.base.tokens import TokenCounter
from memory.config import BudgetConfig
from memory.errors import UnreadableFileError
from memory.index.chunks import Chunk
from memory.index.embedders import Vector
from memory.index.passages import PassageCache
from memory.index.sources import KIND_LOG, KIND_MEMORY
from memory.index.veccache import pick
from memory.index.views import split_view
from memory.search.pool import CandidatePool
from memory.search.results import SearchHit
from memory.store.service import MemoryService

log = logging.getLogger(__name__)

# The query sent to search: a 100 KB message is searched by its start.
MAX_QUERY_CHARS = 2000
# What a cached parse costs beside six bytes per byte of its MEMORY.md (tracemalloc: 215 KB
# held by parsing a 42 KB file of 300 memories).
PARSED_BYTES = 2000
# Adaptive retrieval: (message text, user turns so far) -> search or not.
SearchDecider = Callable[[str, int], bool]
# Short-term rows for a message: (user key, message text, latest n) -> candidates.
ShortTermLookup = Callable[[str, str, int], Sequence[Candidate]]


@dataclass(frozen=True, slots=True)
class _Parsed:
    """One parse of MEMORY.md and what every turn derives from it alone."""

    stamp: tuple[int, int, int, int]
    doc: MemoryDocument
    by_id: dict[str, Entry]
    core: tuple[Candidate, ...]  # L0 does not depend on the message
    scoped: tuple[Entry, ...]  # the only entries L1 can pick (non-global scope)
    fallback: Candidate | None
    descriptions: dict[str, str]  # section -> what its meaning is matched on (section gating)


class MemoryView:
    """Reads one user's memory for a turn; thread-safe (called from worker threads)."""

    def __init__(
        self,
        memory: MemoryService,
        topics: TopicIndex,
        budget: BudgetConfig,
        counter: TokenCounter,
        decide: SearchDecider,
        short_term: ShortTermLookup | None = None,
        matcher: SectionMatcher | None = None,
        conversation: ConversationQuery | None = None,
    ) -> None:
        self.memory = memory
        self.topics = topics
        self.budget = budget
        self.counter = counter
        self.decide = decide
        self.short_term = short_term
        searcher = memory.searcher
        self.matcher = matcher or SectionMatcher(
            PassageCache(searcher.embedder, store=searcher.store), searcher.floor
        )
        # How the user's recent lines shape the search (None or 0 turns: the latest line alone).
        self.conversation = conversation or ConversationQuery()
        self.recent = RecentVectors()
        # The person's usual line, taken out of the memories' order (the turn's own context
        # lines join it only after they left it).
        self.background = LineBackground(searcher.store, self.conversation.turns + 1)
        # In the process's byte-budgeted pool: a person not seen for a while is parsed again.
        self._cache: PoolCache[str, _Parsed] = memory.caches.cache("parsed_memory")

    def should_search(self, text: str, user_turns: int) -> bool:
        """Step 5: the adaptive check (docs/retrieval.md, "Adaptive retrieval")."""
        return self.decide(text, user_turns)

    def parsed(self, user_key: str) -> _Parsed:
        """The user's MEMORY.md, parsed again only when the file changed."""
        got = self.memory.documents.get(user_key)  # the search's signals read this parse too
        hit = self._cache.get(user_key)
        if hit is not None and hit.stamp == got.stamp:
            return hit
        doc = got.doc
        parsed = _Parsed(
            got.stamp,
            doc,
            doc.by_id(),
            tuple(core_layer(doc.entries, self.budget)),
            tuple(e for e in doc.entries if scope_name(e.scope)),
            fallback_candidate(doc.entries, self.budget),
            section_descriptions(doc.entries),
        )
        # What it derives holds the text a few times over (the by-id map, the derived parts;
        # the document itself is counted where it is shared).
        self._cache.put(user_key, parsed, PARSED_BYTES + 3 * got.size)
        return parsed

    def prepare(self, user_key: str) -> None:
        """Parse MEMORY.md, give its memories their views and embed its section
        descriptions, off the turn's path.

        The deferred worker runs this after each turn's index work: when a confirm or an
        edit changed a section's newest memories, its new description is embedded (and
        stored) there, so the next turn embeds only its query. Unchanged: two cache hits.
        """
        parsed = self.parsed(user_key)
        # An index built before memory views gets them here, a person at a time, off the turn.
        self.memory.indexer.fill_views(user_key)
        state = self.topics.load(user_key)
        if state is None or dominant_section(state.proportions, state.dominant_threshold) is None:
            return  # no gating: the turn does not use the descriptions either
        self.matcher.cache.vectors(list(parsed.descriptions.values()), user_key)

    def sections(self, user_key: str) -> list[str]:
        """The sections of the user's MEMORY.md, in file order."""
        return list(self.parsed(user_key).doc.sections)

    def select(
        self,
        user_key: str,
        text: str,
        recent: str,
        search: bool,
        now: datetime,
        shown: Callable[[Chunk], bool] | None = None,
        lines: Sequence[str] = (),
        summary_tokens: int | None = None,
    ) -> Selection:
        """Steps 6-7: L0 -> L1 -> L2 -> short-term under the budget, else the fallback.

        ``now`` is the message's time: recency and decay are scored relative to it.
        ``shown``: chunks the prompt holds already (the history window's log records, indexed
        seconds after they were said), which L2 must not spend the budget on again.
        ``lines``: the user's previous lines in the conversation, oldest first, which the
        search takes as context (:mod:`agent.query`).
        ``summary_tokens``: what compaction summary hits (MEMORY_FULL.md) may cost together;
        each is cut to its pieces about the message (None: no such limit).
        """
        parsed = self.parsed(user_key)
        l0 = list(parsed.core)
        l1 = scope_layer(parsed.scoped, f"{text}\n{recent}", self.budget, {c.id for c in l0})
        l2: list[Candidate] = []
        found: tuple[str, ...] = ()
        if search:
            l2, found = self._search_layer(user_key, text, parsed, now, shown, lines)
        if summary_tokens is not None:
            l2 = fit_summaries(l2, text[:MAX_QUERY_CHARS], self.counter, summary_tokens)
        short = (
            list(self.short_term(user_key, text, self.budget.short_term_latest))
            if (self.short_term is not None)
            else []
        )
        chosen = select([l0, l1, l2, short], self.budget, self.counter, parsed.fallback)
        return replace(chosen, found_sections=found)

    @property
    def text_hits_wanted(self) -> int:
        """How many hits the turn's BM25 half is fetched for: enough for section gating (3x
        the L2 limit), so the one started early (agent.pipeline) serves every turn."""
        return 3 * self.budget.l2_max

    def _search_layer(
        self,
        user_key: str,
        text: str,
        parsed: _Parsed,
        now: datetime,
        shown: Callable[[Chunk], bool] | None = None,
        lines: Sequence[str] = (),
    ) -> tuple[list[Candidate], tuple[str, ...]]:
        """The L2 hits after section gating, and the best memory's section before it."""
        query = text[:MAX_QUERY_CHARS]
        limit = self.budget.l2_max
        try:
            searcher = self.memory.searcher
            # Both searches share one BM25 query and one fetch of each candidate; what the
            # prompt shows already never becomes a candidate (the pool leaves it out). The
            # BM25 half and its chunks need no vector: they are ready while the query is
            # still being embedded (the pipeline started both).
            pool = CandidatePool(searcher.store, user_key, shown)
            words = self._words(query, lines)
            if words != query:  # its BM25 runs on another core while the vector half does
                searcher.start_text(user_key, words, self.text_hits_wanted)
            bm25 = searcher.text_hits(user_key, query, self.text_hits_wanted)
            pool.prepare([cid for cid, _ in bm25])
            # Embedded once: gating compares sections with it, and search uses it.
            qvec = searcher.embedder.embed_query(query) if query.strip() else None
            allowed = self._allowed(user_key, text, parsed, qvec)
            # Gating and the memories-first order drop hits after the search: search deeper.
            k = limit * 3
            # As the session stores the line (secrets masked): the recent vectors are looked
            # up by it, and a line with a secret never joins the person's usual line.
            masked = mask(query)
            mixed, earlier = self._mixed(user_key, masked, qvec, lines)
            floor, share = self.budget.l2_memory_min_score, self.budget.l2_memory_share
            hits: list[SearchHit] = []
            if qvec is not None:
                hits = with_memories_below(
                    self.memory.search_result(
                        user_key, query, qvec, k, now=now, text_hits=bm25, pool=pool
                    ),
                    floor,
                    share,
                )
            if mixed is not None:
                words_hits = bm25
                if words != query:
                    words_hits = searcher.text_hits(user_key, words, self.text_hits_wanted)
                    pool.prepare([cid for cid, _ in words_hits])
                other = searcher.search_with_vector(
                    user_key,
                    words,
                    mixed,
                    k,
                    now=now,
                    text_hits=words_hits,
                    pool=pool,
                    line_vectors=earlier or None,
                )
                below = with_memories_below(other, floor, share)
                # Every memory either search found stays: the order below decides among them.
                hits = fuse(hits, below, len(hits) + len(below), self.conversation)
            # What the message is about, by its own search: the best memory's section before
            # gating and before the memories' order below, which the recent lines weigh in
            # (one a turn; weaker hits of other sections would blur the window).
            first = [hit_candidate(h, parsed.by_id) for h in hits[:limit]]
            found = next(((c.section,) for c in first if c.section), ())
            if qvec is not None:
                context = self.recent.lookup(user_key, self._earlier(lines))
                hits = self._memory_order(user_key, hits, qvec, context)
                self._join_background(user_key, qvec, secret=masked != query)
        except Exception:  # embedder down, index damaged: answer without L2, never fail
            log.warning("%s: memory search failed; answering without it", user_key, exc_info=True)
            return [], ()
        cands = [hit_candidate(h, parsed.by_id) for h in hits]
        gated = gate_sections(cands, frozenset(allowed) if allowed else None, len(cands))
        budget = self.budget
        return memories_first(gated, limit, budget.l2_other_max, budget.l2_other_margin), found

    def _join_background(self, user_key: str, qvec: Vector, *, secret: bool) -> None:
        """The turn's line toward the person's usual line; a failed write costs only that."""
        try:
            self.background.add(user_key, qvec, secret=secret)
        except Exception:
            log.warning("%s: the usual line was not updated", user_key, exc_info=True)

    def _earlier(self, lines: Sequence[str]) -> list[str]:
        """The recent lines the conversation's context is made of, as their vectors are kept."""
        turns = self.conversation.turns
        return [line[:MAX_QUERY_CHARS] for line in lines[-turns:]] if turns > 0 else []

    def _memory_order(
        self,
        user_key: str,
        hits: list[SearchHit],
        qvec: Vector,
        context: list[Vector],
    ) -> list[SearchHit]:
        """The memories among ``hits`` ordered on their views (:func:`agent.query.memory_order`),
        its mixed list on a Traditional memory's Simplified view; a memory whose view is not
        stored yet stands for it with its index vector."""
        mine = [h.chunk.id for h in hits if h.chunk.kind == KIND_MEMORY]
        if len(mine) < 2:
            return hits
        store = self.memory.searcher.store
        stored = store.memory_views(user_key, mine)
        missing = [cid for cid in mine if cid not in stored]
        if missing:
            stored.update(pick(*store.user_vectors(user_key), missing))
        dim = len(qvec)
        halves = {cid: split_view(vec, dim) for cid, vec in stored.items()}
        views = {cid: plain for cid, (plain, _) in halves.items()}
        # A Traditional memory's Simplified view, for the mixed list (memory.index.views).
        simplified = {cid: simp for cid, (_, simp) in halves.items()}
        conv = self.conversation
        usual = self.background.of(user_key)
        return memory_order(
            hits, views, qvec, context, conv.weight, conv.rank_offset, simplified, usual
        )

    def _words(self, query: str, lines: Sequence[str]) -> str:
        """The mixed search's keyword query: the recent lines together
        (:func:`agent.query.context_text`), else the latest line."""
        conv = self.conversation
        if not conv.joined_text or conv.turns <= 0 or not lines:
            return query
        return context_text(query, lines, conv.turns, MAX_QUERY_CHARS)

    def _mixed(
        self, user_key: str, masked: str, qvec: Vector | None, lines: Sequence[str]
    ) -> tuple[Vector | None, list[Vector]]:
        """The context search's vectors: (None, []) to search the latest line alone.
        ``masked``: the latest line with its secrets masked, as the session stores it.

        ``per_line`` (off by default): the latest line's vector and the recent lines' as
        separate queries, a candidate keeping its best similarity (the searcher's line
        vectors, as for a pasted dialogue); else one vector mixing them
        (:func:`context_vector`). The recent lines' vectors are the ones their own turns
        embedded (no embedding here); this turn's is kept for the turns to come.
        """
        conv = self.conversation
        if qvec is None or conv.turns <= 0:
            return None, []
        self.recent.remember(user_key, masked, qvec)
        context = self.recent.lookup(user_key, self._earlier(lines))
        if not conv.per_line:
            return context_vector(qvec, context, conv.weight), []
        return (qvec, context) if context else (None, [])

    def _allowed(
        self, user_key: str, text: str, parsed: _Parsed, qvec: Vector | None
    ) -> list[str] | None:
        """Section gating: the sections L2 may use (None: all), by keyword and by meaning."""
        state = self.topics.load(user_key)
        if state is None or dominant_section(state.proportions, state.dominant_threshold) is None:
            return None  # no gating: do not spend the section embeddings
        about = self.matcher.about(parsed.descriptions, qvec, user_key) if qvec is not None else []
        return sections_to_query(state, text, parsed.doc.sections, about=about)


def shown_in_window(window: Sequence[Message]) -> Callable[[Chunk], bool]:
    """Whether a chunk is a log record the history ``window``'s messages show already.

    Those records are indexed seconds after they were said and are in the prompt as
    history: search finds other memories instead of spending the budget on them again.
    """
    said = frozenset(f"user: {m.content}" for m in window if m.role == ROLE_USER)
    ids = frozenset(m.id for m in window if m.id)

    def shown(chunk: Chunk) -> bool:
        return chunk.kind == KIND_LOG and (chunk.unit_id in ids or chunk.text in said)

    return shown


def problem_topic(exc: UnreadableFileError, user_root: Path) -> str:
    """The file a problem is about, as its owner knows it (relative to their folder)."""
    path = exc.path
    return path.relative_to(user_root).as_posix() if path.is_relative_to(user_root) else path.name


def file_problem_notice(exc: UnreadableFileError, topic: str, lang: str) -> str:
    """The one notice a user gets about a file of theirs that PCAI cannot read, in ``lang``."""
    return error_text(exc, lang, topic=topic)


def said_on(chunk: Chunk) -> str:
    """The day a daily-log line was said in conversation ("" for a memory or a summary)."""
    if chunk.kind != KIND_LOG or chunk.text.startswith(LOG_SUMMARY_PREFIX):
        return ""
    return chunk.date[:10]


def hit_candidate(hit: SearchHit, by_id: dict[str, Entry]) -> Candidate:
    """A search hit as an L2 candidate (a memory entry keeps its id, summary and section)."""
    chunk = hit.chunk
    entry = by_id.get(chunk.unit_id) if chunk.kind == KIND_MEMORY else None
    if entry is not None:
        cand = entry_candidate(entry, L2, hit.score)
        # A long entry is indexed in pieces: inject the piece that matched.
        return Candidate(
            cand.id, L2, hit.score, chunk.text, cand.summary, cand.source, cand.date, cand.section
        )
    return Candidate(
        id=f"{chunk.path}#{chunk.unit_id}",
        layer=L2,
        score=hit.score,
        text=chunk.text,
        source=chunk.path,
        date=chunk.date,
        said=bool(said_on(chunk)),
    )
