"""Keep the index in step with the Markdown: the change detector and the full rebuild.

For each source file the indexer compares the units it parses (entries, log records, summary
blocks) with what the index holds, by unit id and content hash, and re-indexes only what
changed. A file whose size and mtime are unchanged since it was last indexed is skipped
without being read, which makes a check before every search cheap.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory.base.locks import user_lock
from memory.base.tokens import TokenCounter
from memory.base.users import UserPaths, day_files, list_user_keys
from memory.config import IndexConfig
from memory.index.chunking import chunk_text
from memory.index.chunks import IndexStore, NewChunk
from memory.index.embedders import Embedder
from memory.index.sources import KIND_MEMORY, Unit, source_files, units_of
from memory.index.veccache import pick
from memory.index.views import Matrix, memory_views

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]

# A file changed this recently may change again within the same filesystem timestamp tick
# without its (mtime, size) moving: such a state is not trusted and the file is re-read
# (cheaply: unchanged units are matched by hash, not re-embedded) until it has settled.
RACY_WINDOW_NS = 2_000_000_000
# How often a sync compares again when another indexer changed the file's rows meanwhile.
PLAN_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class SyncStats:
    """What one sync changed."""

    added: int = 0
    removed: int = 0
    files: int = 0

    def __add__(self, other: SyncStats) -> SyncStats:
        return SyncStats(
            self.added + other.added, self.removed + other.removed, self.files + other.files
        )


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one file's sync will change, and the index rows it was compared with."""

    indexed: dict[str, str]
    remove: list[str] = field(default_factory=list)
    fresh: int = 0
    chunks: list[NewChunk] = field(default_factory=list)
    state: tuple[int, int] | None = None  # the file's (mtime, size); None: it is gone


def _unique(units: list[Unit]) -> list[Unit]:
    # Two identical hand-written bullets get the same derived id: number the repeats.
    seen: dict[str, int] = {}
    out = []
    for u in units:
        n = seen.get(u.unit_id, 0)
        seen[u.unit_id] = n + 1
        if n:
            u = replace(u, unit_id=f"{u.unit_id}~{n + 1}")
        out.append(u)
    return out


class Indexer:
    """Indexes a user's Markdown files into an :class:`IndexStore`."""

    def __init__(
        self,
        data_dir: Path,
        store: IndexStore,
        embedder: Embedder,
        counter: TokenCounter,
        config: IndexConfig,
    ) -> None:
        self.data_dir = data_dir
        self.store = store
        self.embedder = embedder
        self.counter = counter
        self.config = config

    def chunks_for(self, user_key: str, unit: Unit) -> list[NewChunk]:
        """Cut one unit into chunks of at most ``chunk_tokens`` tokens."""
        pieces = chunk_text(
            unit.text, self.counter, self.config.chunk_tokens, self.config.chunk_overlap_tokens
        )
        return [
            NewChunk(
                user_key=user_key,
                kind=unit.kind,
                path=unit.path,
                unit_id=unit.unit_id,
                ordinal=i,
                content_hash=unit.content_hash,
                section=unit.section,
                date=unit.date,
                line_start=unit.line_start,
                line_end=unit.line_end,
                importance=unit.importance,
                status=unit.status,
                tokens=self.counter.count(piece),
                refs=unit.refs,
                text=piece,
                fts_text=unit.index_text(piece),
            )
            for i, piece in enumerate(pieces)
        ]

    def sync_file(self, user_key: str, rel: str, *, force: bool = False) -> SyncStats:
        """Bring the index of one file up to date; returns what changed.

        The file is read, compared with its index rows and its new units embedded without
        the user's lock, so a turn appending to the user's log never waits for a parse or an
        embedding. The rows are written under the lock, and only when they are still the
        ones compared with: two indexers (the worker, the minute job, ``pcai reindex``) on the
        same file would otherwise both add its new units. Otherwise it compares again.
        """
        for _ in range(PLAN_ATTEMPTS):
            plan = self._plan(user_key, rel, force)
            if plan is None:
                return SyncStats()
            vectors = self._embed(plan.chunks)
            with user_lock(self.data_dir, user_key):
                if self.store.indexed_units(user_key, rel) == plan.indexed:
                    return self._apply(user_key, rel, plan, *vectors)
        with user_lock(self.data_dir, user_key):  # a busy file: all of it in one hold
            plan = self._plan(user_key, rel, force)
            if plan is None:
                return SyncStats()
            return self._apply(user_key, rel, plan, *self._embed(plan.chunks))

    def _plan(self, user_key: str, rel: str, force: bool) -> _Plan | None:
        """What a sync would change; None when nothing (the file is as last indexed)."""
        paths = UserPaths.of(self.data_dir, user_key)
        try:
            st = (paths.root / rel).stat()
        except FileNotFoundError:
            indexed = self.store.indexed_units(user_key, rel)
            return _Plan(indexed=indexed, remove=list(indexed), state=None) if indexed else None
        state = (st.st_mtime_ns, st.st_size)  # taken before the read: a later write shows
        if not force and self.store.file_state(user_key, rel) == state:
            return None
        units = _unique(units_of(paths, rel))
        indexed = self.store.indexed_units(user_key, rel)
        current = {u.unit_id: u for u in units}
        remove = [
            uid
            for uid, digest in indexed.items()
            if uid not in current or current[uid].content_hash != digest
        ]
        fresh = [u for u in units if indexed.get(u.unit_id) != u.content_hash]
        chunks = [c for u in fresh for c in self.chunks_for(user_key, u)]
        return _Plan(indexed=indexed, remove=remove, fresh=len(fresh), chunks=chunks, state=state)

    def _embed(self, chunks: list[NewChunk]) -> tuple[Matrix, dict[int, Matrix]]:
        """The chunks' passage vectors, and the memory views of the confirmed memories'
        chunks by position (:mod:`memory.index.views`)."""
        if not chunks:
            return np.zeros((0, self.embedder.dim), dtype=np.float32), {}
        # The index text: the chunk with its context (a log record's neighbours).
        texts = [c.fts_text or c.text for c in chunks]
        vectors = self.embedder.embed_passages(texts)
        mine = [i for i, c in enumerate(chunks) if c.kind == KIND_MEMORY]
        views = memory_views(self.embedder, [texts[i] for i in mine], vectors[mine])
        return vectors, dict(zip(mine, views, strict=True))

    def fill_views(self, user_key: str) -> int:
        """Give the user's memories without a view one (an index built before views);
        returns how many. Off the turn's path: the deferred worker runs it."""
        missing = self.store.memories_without_view(user_key)
        if not missing:
            return 0
        ids, matrix = self.store.user_vectors(user_key)
        rows = pick(ids, matrix, [cid for cid, _ in missing])
        have = [(cid, text) for cid, text in missing if cid in rows]
        if not have:
            return 0
        views = memory_views(
            self.embedder, [t for _, t in have], np.stack([rows[cid] for cid, _ in have])
        )
        self.store.add_memory_views(user_key, dict(zip([c for c, _ in have], views, strict=True)))
        return len(have)

    def _apply(
        self,
        user_key: str,
        rel: str,
        plan: _Plan,
        vectors: npt.NDArray[np.float32],
        views: dict[int, Matrix],
    ) -> SyncStats:
        if plan.state is None:  # the file is gone: so are its rows
            self.store.delete_path(user_key, rel)
            return SyncStats(removed=len(plan.remove), files=1)
        if plan.remove or plan.chunks:
            self.store.replace_units(user_key, rel, plan.remove, plan.chunks, vectors, views)
        mtime, size = plan.state
        settled = time.time_ns() - mtime > RACY_WINDOW_NS
        self.store.set_file_state(user_key, rel, mtime if settled else -1, size)
        return SyncStats(added=plan.fresh, removed=len(plan.remove), files=1)

    def sync_user(
        self, user_key: str, *, force: bool = False, progress: Progress | None = None
    ) -> SyncStats:
        """Sync every source file of a user, and drop files that disappeared.

        The minute job runs this for every person: a file whose size and mtime are those it
        was indexed with is passed over on one read of the user's states, not a query each
        (1,000 people of 31 files: 3.9 CPU s every minute with a query a file, 0.5 s so).
        """
        paths = UserPaths.of(self.data_dir, user_key)
        files = source_files(paths)
        rels = set(files) | self.store.indexed_paths(user_key)
        known = {} if force else self.store.file_states(user_key)
        total = SyncStats()
        ordered = sorted(rels)
        for i, rel in enumerate(ordered, start=1):
            if rel not in known or _state(paths.root / rel) != known[rel]:
                total += self.sync_file(user_key, rel, force=force)
            if progress:
                progress(i, len(ordered))
        return total

    def sync_daily_logs(self, user_keys: list[str] | None = None) -> SyncStats:
        """Index new log lines of every user (or of ``user_keys``); unchanged files are skipped."""
        total = SyncStats()
        for user_key in user_keys if user_keys is not None else list_user_keys(self.data_dir):
            for day_file in day_files(UserPaths.of(self.data_dir, user_key)):
                total += self.sync_file(user_key, f"memory/{day_file.name}")
        return total

    def refill_fts(self) -> SyncStats:
        """Put every indexed chunk back in its user's FTS table after a schema-2 upgrade.

        The text and context are read from the Markdown again; the stored vectors are kept,
        so nothing is embedded except units that changed since they were indexed (those are
        dropped and indexed anew by a sync of their file).
        """
        total = SyncStats()
        for user in self.store.users():
            paths = UserPaths.of(self.data_dir, user)
            with user_lock(self.data_dir, user):
                for rel in sorted(self.store.indexed_paths(user)):
                    units = _unique(units_of(paths, rel)) if (paths.root / rel).exists() else []
                    context = {
                        (c.unit_id, c.ordinal, c.content_hash): c.fts_text
                        for u in units
                        for c in self.chunks_for(user, u)
                    }
                    rows, stale = [], set()
                    for cid, unit_id, ordinal, digest, text in self.store.chunk_keys(user, rel):
                        found = context.get((unit_id, ordinal, digest))
                        if found is None:
                            stale.add(unit_id)
                        else:
                            rows.append((cid, text, found))
                    self.store.fill_fts(user, rel, rows, stale)
            total += self.sync_user(user)
        self.store.finish_fts_refill()
        log.info("FTS refilled; %d changed units re-indexed", total.added)
        return total

    def rebuild(self, progress: Progress | None = None) -> SyncStats:
        """Re-index every user's files from the Markdown (after a schema or model change)."""
        total = SyncStats()
        users = list_user_keys(self.data_dir)
        for i, user in enumerate(users, start=1):
            total += self.sync_user(user, force=True)
            if progress:
                progress(i, len(users))
        self.store.mark_rebuilt()
        log.info("index rebuilt: %d units in %d files", total.added, total.files)
        return total


def _state(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of ``path``, None when it is gone."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)
