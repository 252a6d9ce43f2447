"""The memory library's front door: ``memory.open(data_dir)`` returns a :class:`Memory`.

Example::

    import memory

    with memory.open("my-data") as m:
        entry = m.remember("cli_me", "I take my coffee black, no sugar")
        for hit in m.search("cli_me", "coffee"):
            print(hit.score, hit.chunk.text)
        print(m.export("cli_me"))
        m.forget("cli_me", entry.id)

A :class:`Memory` owns everything ``memory/`` keeps for one data dir: the index store, its
indexer and searcher, ``pcai.db`` (pending proposals, access counters, short-term rows, undo
copies), governance and the lifecycle. The bot's composition root builds its services through
:func:`open` too, so a script and the bot run the same code over the same files.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Literal, overload

from memory.base.guards import FORGOTTEN
from memory.base.heap import release_freed_blocks
from memory.base.lru import MB, CachePool
from memory.base.markdown import Entry
from memory.base.parsed import ParsedMemory
from memory.base.tokens import TokenCounter, load_counter
from memory.config import MemoryConfig, index_path, state_db_path
from memory.errors import EntryNotFoundError
from memory.index.chunks import IndexStore
from memory.index.embedders import E5Embedder, Embedder
from memory.index.indexer import Indexer, Progress, SyncStats
from memory.index.veccache import one_blas_thread
from memory.search.hybrid import HybridSearcher
from memory.search.results import SearchHit, SearchResult
from memory.search.signals import MemorySignals
from memory.state.fading import FadeBook
from memory.state.migrations import MEMORY_SET, Migration
from memory.state.short_term import ShortTermStore
from memory.state.statedb import StateDB
from memory.state.undo import UndoStore
from memory.state.usage import AccessCounter
from memory.store.service import MemoryService
from memory.write.consent import Action, UserActMint
from memory.write.decisions import ConfirmationService, section_name
from memory.write.governance import LIVE, Governance, chains_markdown, export_records
from memory.write.lifecycle import Lifecycle
from memory.write.pending import PendingStore
from memory.write.proposals import Reconciled

log = logging.getLogger(__name__)

ExportFormat = Literal["markdown", "json"]
# Whoever holds the front door is the data dir's operator, as with `pcai remember`.
OPERATOR = "operator"
# An update keeps these of the version it replaces unless told otherwise ...
_KEPT = ("scope", "canonical_topic", "is_core", "enforcement_level", "user_weight", "importance")
# ... and these too when the text stays the same (else they are derived from the new text).
_OF_THE_TEXT = ("summary", "memory_class", "claims")


# Named like the builtin on purpose: `memory.open(path)` reads as `sqlite_utils.Database(path)`.
def open(
    data_dir: str | os.PathLike[str],
    *,
    embedder: Embedder | None = None,
    settings: MemoryConfig | None = None,
    ensure_index: bool = True,
    migrations: Sequence[Migration] = MEMORY_SET,
) -> Memory:
    """Open the memory kept in ``data_dir`` (created if missing) and return its service.

    Args:
        data_dir: the data folder (``users/``, ``knowledge/``, ``pcai.db`` live under it).
        embedder: what turns text into vectors; the embedded multilingual-e5-small by default.
        settings: the memory package's configuration; the shipped defaults if None.
        ensure_index: rebuild the index from the Markdown now if it is new or was built by
            another model (False leaves that to :meth:`Memory.ensure_index`, e.g. to show
            progress).
        migrations: ``pcai.db``'s migration sets; memory's own by default (the bot gives
            every owner's, bot/schema.py).
    """
    mem = Memory(Path(data_dir), embedder=embedder, settings=settings, migrations=migrations)
    try:
        healed = mem.reconcile_pending()
        for user_key, exc in healed.unreadable.items():
            log.warning("%s: pending proposals not checked at open: %s", user_key, exc)
    except Exception:  # healing must not become the reason the memory cannot open
        log.exception("reconciling pending proposals at open failed")
    if ensure_index:
        try:
            mem.ensure_index()
        except BaseException:
            mem.close()
            raise
    return mem


class Memory:
    """Remember, search, read, update, forget and export one data dir's memories."""

    def __init__(
        self,
        data_dir: Path,
        *,
        embedder: Embedder | None = None,
        settings: MemoryConfig | None = None,
        migrations: Sequence[Migration] = MEMORY_SET,
    ) -> None:
        self.data_dir = data_dir
        self.settings = cfg = settings or MemoryConfig()
        one_blas_thread()
        # What the caches' budget evicts must leave the process too (memory/base/heap.py).
        release_freed_blocks()
        data_dir.mkdir(parents=True, exist_ok=True)
        self.counter: TokenCounter = load_counter()
        self.embedder: Embedder = embedder or E5Embedder(batch_size=cfg.index.embed_batch_size)
        # One byte budget for every per-user cache of this process, the agent's and the memory
        # page's too (they take theirs from here): least recently used out first.
        self.caches = CachePool(cfg.cache_mb * MB)
        self.store = IndexStore(
            index_path(data_dir), self.embedder.name, self.embedder.dim, self.caches
        )
        try:
            self.state = StateDB(state_db_path(data_dir), migrations)
        except BaseException:
            self.store.close()
            raise
        self._closed = False
        self.indexer = Indexer(data_dir, self.store, self.embedder, self.counter, cfg.index)
        self.access = AccessCounter(self.state)
        # The retrieval score ranks by these.
        documents = ParsedMemory(data_dir, self.caches.cache("parsed_documents"))
        signals = MemorySignals(
            data_dir, self.access, self.caches.cache("memory_weights"), documents
        )
        self.searcher = HybridSearcher(self.store, self.embedder, cfg.retrieval, signals)
        self.service = MemoryService(data_dir, self.indexer, self.searcher, documents)
        self.pending = PendingStore(self.state, cfg.pending)
        self.short_term = ShortTermStore(self.state)
        self.undo = UndoStore(self.state, cfg.forget_undo_minutes)
        self.governance = Governance(
            self.service,
            cfg.pending.conflict_top_k,
            cfg.pending.conflict_similarity,
            self.access,
            self.undo,  # the user's changes to confirmed memories are noted for /undo
        )
        # Archives only what its owner was told is fading (the bot's weekly notice).
        self.lifecycle = Lifecycle(self.service, self.access, cfg.lifecycle, FadeBook(self.state))
        # Seals the user's answers to proposals. It stays with whoever holds this object (a
        # script, the bot layer, the CLI); the agent gets the single services, never this.
        self.user_acts = UserActMint()  # a fresh secret each open: acts never outlive it
        self.confirm = ConfirmationService(
            self.service, self.pending, self.governance, self.user_acts.check
        )

    # -- writing -------------------------------------------------------------------------
    def remember(
        self,
        user_key: str,
        text: str,
        *,
        section: str | None = None,
        now: datetime | None = None,
        **fields: object,
    ) -> Entry:
        """Check ``text`` as chat would (noise, secrets, duplicates), then confirm it.

        The guards and the write are the confirmation service's; the confirmation is the
        operator's own act. ``fields`` are governance fields (``canonical_topic``,
        ``is_core``, ``user_weight``, ...). Raises
        :class:`memory.write.decisions.ProposalRefusedError` with the reason when the text is
        refused.
        """
        return self._as_operator(user_key, text, section, now, fields)

    def update(
        self,
        user_key: str,
        entry_id: str,
        text: str | None = None,
        *,
        section: str | None = None,
        now: datetime | None = None,
        **fields: object,
    ) -> Entry:
        """Write a new version of a live memory that supersedes it; returns the new entry.

        The old version stays in MEMORY.md as ``deprecated`` (see :meth:`history`); the new one
        keeps its section, topic, scope, weight and importance unless given.
        """
        old = self.get(user_key, entry_id)
        if old.status not in LIVE:
            raise ValueError(f"{old.id} is {old.status}: update the version that replaced it")
        same = text is None or text.strip() == old.text
        values = {name: getattr(old, name) for name in _KEPT + (_OF_THE_TEXT if same else ())}
        values.update(fields)
        new_text = old.text if text is None else text
        return self._as_operator(
            user_key, new_text, section or old.section, now, values, replaces=(old.id,)
        )

    def _as_operator(
        self,
        user_key: str,
        text: str,
        section: str | None,
        now: datetime | None,
        fields: Mapping[str, object],
        replaces: tuple[str, ...] = (),
    ) -> Entry:
        """Propose ``text`` through the guards chat uses, then answer it as the operator.

        The answer confirms a new memory, or replaces ``replaces`` when it names the versions
        the text supersedes.
        """
        now = now or datetime.now().astimezone()
        if section is not None:  # "## Evil" names the section "Evil": the heading adds "## "
            section = section_name(section) or None
        proposal = self.confirm.propose(
            user_key, text, OPERATOR, section=section, now=now, fields=fields, replaces=replaces
        )
        action: Action = "replace" if replaces else "confirm"
        act = self.user_acts.act(user_key, proposal.id, action, via=OPERATOR)
        return self.confirm.confirm(act, now=now)

    def forget(self, user_key: str, entry_id: str) -> list[Entry]:
        """Delete a memory and the versions it replaced: the Markdown, the index, pcai.db.

        Returns what was removed, the named entry last. Their text is gone from MEMORY.md, the
        index (file pages included) and the proposals they came from. Daily logs, summaries
        and sessions belong to ``history/``: the bot's ``/forget``
        (:class:`agent.forget.Forgetter`) redacts those as well and keeps an undo copy.
        """
        gone = self.governance.forget(user_key, entry_id)
        ids = frozenset(e.id for e in gone)
        self.pending.redact(user_key, _unchanged, ids, FORGOTTEN)
        for e in gone:
            self.access.forget(user_key, e.id)
        self.store.scrub()
        self.undo.checkpoint()
        return gone

    def reindex(self, user_key: str | None = None, progress: Progress | None = None) -> SyncStats:
        """Re-read one user's (or everyone's) Markdown into the index."""
        return self.service.reindex(user_key, progress=progress)

    def ensure_index(self, progress: Progress | None = None) -> SyncStats | None:
        """Rebuild the index if it is new or its schema or model changed (else None)."""
        return self.service.ensure_index(progress)

    def reconcile_pending(
        self, now: datetime | None = None, *, due_only: bool = False
    ) -> Reconciled:
        """Mark confirmed every pending proposal whose entry MEMORY.md already holds.

        A crash between writing a confirmed memory and marking its proposal leaves the row
        pending while the entry exists (its id derives from the proposal's): :func:`open`
        settles that, so it is never reported as "not saved". ``due_only`` looks only at
        proposals past their expiry (what the expiry job is about to report).
        """
        healed = self.pending.reconcile(
            lambda user_key: {e.id for e in self.service.entries(user_key)},
            now or datetime.now(UTC),
            due_only=due_only,
        )
        for p in healed.confirmed:
            log.warning(
                "%s: proposal %s was in MEMORY.md as %s but still pending (a crash between "
                "the two writes): marked confirmed",
                p.user_key,
                p.id,
                p.entry_id,
            )
        return healed

    # -- reading -------------------------------------------------------------------------
    @overload
    def search(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        explain: Literal[False] = False,
        now: datetime | None = None,
    ) -> list[SearchHit]: ...

    @overload
    def search(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        explain: Literal[True],
        now: datetime | None = None,
    ) -> SearchResult: ...

    @overload
    def search(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        explain: bool,
        now: datetime | None = None,
    ) -> list[SearchHit] | SearchResult: ...

    def search(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        explain: bool = False,
        now: datetime | None = None,
    ) -> list[SearchHit] | SearchResult:
        """The best ``k`` (default ``top_k``) of the user's memories, logs and summaries.

        With ``explain=True`` the same single run returns a :class:`SearchResult`: the hits
        with each stage's score (``hit.stages``) and the candidates each stage dropped.
        """
        result = self.service.search_explained(user_key, query, k, now=now)
        return result if explain else result.hits

    def get(self, user_key: str, entry_id: str) -> Entry:
        """One of the user's entries by id, whatever its status."""
        entry = self.service.document(user_key).by_id().get(entry_id.strip())
        if entry is None:
            raise EntryNotFoundError(entry_id.strip())  # the edge says it, in one language
        return entry

    def entries(self, user_key: str) -> list[Entry]:
        """Every entry of the user's MEMORY.md, in file order."""
        return self.service.entries(user_key)

    def history(self, user_key: str, topic: str) -> list[Entry]:
        """Every version of a memory, oldest first: by entry id, or each chain of a topic."""
        return self.governance.archaeology(user_key, topic)

    def export(self, user_key: str, format: ExportFormat = "markdown") -> str:
        """All of the user's memories as Markdown (MEMORY.md and its chains) or JSON."""
        entries = self.service.entries(user_key)
        if format == "json":
            records = export_records(entries, self.access.get_many(user_key))
            return json.dumps(records, ensure_ascii=False, indent=2) + "\n"
        if format != "markdown":
            raise ValueError(f"export format must be 'markdown' or 'json', not {format!r}")
        return self.service.export_markdown(user_key) + chains_markdown(entries)

    # -- lifetime ------------------------------------------------------------------------
    def close(self) -> None:
        """Close the index and ``pcai.db`` (a second call does nothing)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.store.close()
        finally:
            self.state.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _unchanged(text: str) -> str:
    # Rows of other memories stay as they are; only the forgotten ones' proposals are blanked.
    return text
