"""The memory service: what the rest of PCAI calls to read, write and search memories."""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.base.fsutil import atomic_write_text, read_text
from memory.base.guards import mask
from memory.base.locks import FileLock, user_lock
from memory.base.lru import CachePool
from memory.base.markdown import (
    DEFAULT_SECTION,
    Entry,
    MemoryDocument,
    new_entry_id,
    parse_memory,
    render_memory,
)
from memory.base.parsed import ParsedMemory
from memory.base.users import UserPaths, check_user_key
from memory.errors import EntryNotFoundError
from memory.index.embedders import Vector
from memory.index.indexer import Indexer, Progress, SyncStats
from memory.search.hybrid import SEARCHABLE, HybridSearcher
from memory.search.pool import CandidatePool
from memory.search.results import SearchHit, SearchResult


class MemoryService:
    """Reads and writes users' MEMORY.md and keeps the index in step."""

    def __init__(
        self,
        data_dir: Path,
        indexer: Indexer,
        searcher: HybridSearcher,
        documents: ParsedMemory | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.indexer = indexer
        self.searcher = searcher
        # Each user's MEMORY.md parsed once per change, shared with the search's signals.
        self.documents = documents or ParsedMemory(
            data_dir, indexer.store.caches.cache("parsed_documents")
        )

    def lock(self, user_key: str) -> FileLock:
        """The lock every write of one user's files takes (threads here, other processes).

        Hold it across a read-modify-write of MEMORY.md so that no writer, in this process or
        another (``pcai remember``, the service), loses another's update.
        """
        return user_lock(self.data_dir, user_key)

    @property
    def caches(self) -> CachePool:
        """The byte-budgeted pool every per-user cache of this process shares
        (``PCAI_CACHE_MB``): the index's, and the agent's and the memory page's parses."""
        return self.indexer.store.caches

    def paths(self, user_key: str) -> UserPaths:
        """The user's folder layout."""
        return UserPaths.of(self.data_dir, user_key)

    def ensure_index(self, progress: Progress | None = None) -> SyncStats | None:
        """Rebuild the index from the Markdown if it is new or its schema/model changed.

        An index upgraded from schema 2 keeps its vectors and gets its FTS rows back.
        """
        if self.indexer.store.needs_rebuild:
            return self.indexer.rebuild(progress)
        if self.indexer.store.fts_refill_pending:
            return self.indexer.refill_fts()
        return None

    # -- reading -------------------------------------------------------------------------
    def document(self, user_key: str) -> MemoryDocument:
        """The user's parsed MEMORY.md."""
        return parse_memory(read_text(self.paths(user_key).memory_md))

    def entries(self, user_key: str) -> list[Entry]:
        """Every entry of the user's MEMORY.md, in file order."""
        return list(self.document(user_key).entries)

    def search(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        now: datetime | None = None,
        qvec: Vector | None = None,
        statuses: tuple[str, ...] = SEARCHABLE,
        text_hits: list[tuple[int, float]] | None = None,
        pool: CandidatePool | None = None,
    ) -> list[SearchHit]:
        """Search one user's memories, logs and summaries (picking up hand edits first).

        ``qvec`` is the query's vector when the caller embedded it already (a turn embeds
        once); ``statuses`` the entry statuses searched (history looks at old versions too);
        ``text_hits`` the BM25 candidates and ``pool`` their fetched chunks, which a caller
        shares between several searches.
        """
        if qvec is None:
            return self.search_explained(user_key, query, k, now=now, statuses=statuses).hits
        return self.search_result(
            user_key, query, qvec, k, now=now, statuses=statuses, text_hits=text_hits, pool=pool
        ).hits

    def search_result(
        self,
        user_key: str,
        query: str,
        qvec: Vector,
        k: int | None = None,
        *,
        now: datetime | None = None,
        statuses: tuple[str, ...] = SEARCHABLE,
        text_hits: list[tuple[int, float]] | None = None,
        pool: CandidatePool | None = None,
    ) -> SearchResult:
        """Like :meth:`search` with the query's vector, the dropped candidates too (the turn
        takes memories a threshold dropped: agent.query.with_memories_below)."""
        self._sync(user_key)
        return self.searcher.search_with_vector(
            user_key, query, qvec, k, now=now, statuses=statuses, text_hits=text_hits, pool=pool
        )

    def search_explained(
        self,
        user_key: str,
        query: str,
        k: int | None = None,
        *,
        now: datetime | None = None,
        statuses: tuple[str, ...] = SEARCHABLE,
    ) -> SearchResult:
        """Like :meth:`search`, also returning each dropped candidate and why (one run)."""
        self._sync(user_key)
        return self.searcher.search_explained(user_key, query, k, now=now, statuses=statuses)

    def _sync(self, user_key: str) -> None:
        """Index a hand edit of MEMORY.md before searching it.

        No user lock: the sync writes rows only under it, and only if they are still the
        rows it compared with, so a turn's search never waits for a write of the user's log.
        """
        self.indexer.sync_file(check_user_key(user_key), "MEMORY.md")

    # -- writing -------------------------------------------------------------------------
    def write_document(self, user_key: str, doc: MemoryDocument, *, index: bool = True) -> None:
        """Atomically replace MEMORY.md with ``doc`` and re-index the changed entries.

        With ``index=False`` only the file is written; the change detector (the next
        :meth:`index_memory`, search or sync) indexes it later.
        """
        with self.lock(user_key):
            atomic_write_text(self.paths(user_key).memory_md, render_memory(doc))
            if index:
                self.index_memory(user_key)

    def index_memory(self, user_key: str) -> SyncStats:
        """Index what changed in MEMORY.md (forced: two writes within one mtime tick)."""
        with self.lock(user_key):
            return self.indexer.sync_file(check_user_key(user_key), "MEMORY.md", force=True)

    def forget(self, user_key: str, entry_id: str) -> Entry:
        """Remove one entry from MEMORY.md and from the index; returns what was removed.

        Only the entry: the user's /forget goes through :class:`agent.forget.Forgetter`, which
        also redacts the text from logs, summaries and sessions and keeps an undo copy.
        """
        with self.lock(user_key):
            doc = self.document(user_key)
            entry = doc.by_id().get(entry_id.strip())
            if entry is None:
                raise EntryNotFoundError(entry_id)
            self.write_document(user_key, doc.without(entry.id))
        return entry

    def remember(
        self,
        user_key: str,
        text: str,
        *,
        section: str | None = None,
        now: datetime | None = None,
        **fields: Any,
    ) -> Entry:
        """Add a confirmed memory to MEMORY.md and index it; returns the new entry."""
        now = now or datetime.now().astimezone()
        text = mask(text.strip())  # the operator's `pcai remember` stores no secret either
        if not text:
            raise ValueError("a memory needs some text")
        with self.lock(user_key):
            doc = self.document(user_key)
            entry = Entry(
                id=new_entry_id(now, text),
                text=text,
                section=mask((section or DEFAULT_SECTION).strip()) or DEFAULT_SECTION,
                created_at=now.isoformat(timespec="seconds"),
            )
            if fields:
                entry = replace(entry, **fields)
            self.write_document(user_key, doc.with_entry(entry))
        return entry

    def reindex(self, user_key: str | None = None, progress: Progress | None = None) -> SyncStats:
        """Re-index one user (or everyone) from the Markdown, forcing a full read."""
        if user_key is None:
            return self.indexer.rebuild(progress)
        return self.indexer.sync_user(check_user_key(user_key), force=True, progress=progress)

    # -- export --------------------------------------------------------------------------
    def export_json(self, user_key: str) -> list[dict[str, Any]]:
        """All of a user's memories as plain dicts (every governance field included)."""
        return [asdict(e) for e in self.entries(user_key)]

    def export_markdown(self, user_key: str) -> str:
        """All of a user's memories as Markdown (their MEMORY.md as PCAI writes it)."""
        return render_memory(self.document(user_key))
