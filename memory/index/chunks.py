"""The derived search index: ``knowledge/pcai_memory.sqlite``.

Tables (:mod:`memory.index.schema`): ``chunks`` (text and source of every indexed piece), one
FTS5 table per user over the CJK-spaced text for BM25 (:mod:`memory.index.fts`), ``chunk_vec``
(sqlite-vec ``vec0``, cosine distance, partitioned by user; searched through an in-memory
copy, :mod:`memory.index.veccache`), ``files`` (what was indexed from which file, for change
detection), ``meta`` (embedding model and dimension) and ``passage_vec`` (each user's section
descriptions' vectors, :mod:`memory.index.passages`). Nothing here is the truth: deleting
the file loses nothing, the indexer rebuilds it from the Markdown.
"""

from __future__ import annotations

import json
import logging
import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.base.db import connect, is_damaged, set_aside
from memory.base.lru import MB, CachePool, CappedMap
from memory.config import DEFAULT_CACHE_MB
from memory.index import fts
from memory.index.schema import FTS_REFILL, SCHEMA_VERSION, Chunk, NewChunk, prepare, row_to_chunk
from memory.index.sources import KIND_MEMORY
from memory.index.text import space_cjk
from memory.index.veccache import VectorCache, nearest, pick

log = logging.getLogger(__name__)

__all__ = ["SCHEMA_VERSION", "Chunk", "IndexStore", "NewChunk"]

WRITE_BUCKETS = 4096


def _bucket(user_key: str) -> int:
    return zlib.crc32(user_key.encode()) % WRITE_BUCKETS


class IndexStore:
    """Reads and writes the index database. Thread-safe behind one lock."""

    def __init__(self, path: Path, model: str, dim: int, caches: CachePool | None = None) -> None:
        self.path = path
        self.model = model
        self.dim = dim
        self._lock = threading.RLock()
        # The pool the process's per-user caches share (memory.open passes it): the vectors
        # and the term counts here go in it.
        self.caches = caches if caches is not None else CachePool(DEFAULT_CACHE_MB * MB)
        self._vec_cache = VectorCache(dim, self.caches.cache("vectors"))
        self._vec_cache_version = -1
        # Each user's chunk count, while nothing changed (counted again once dropped).
        self._rows: CappedMap[str, int] = CappedMap()
        # Each user's memory chunk ids, kept and dropped with the count; and the users whose
        # memories all have a view (every write gives a new memory its view with it).
        self._memory_ids: CappedMap[str, npt.NDArray[np.int64]] = CappedMap()
        self._viewed: CappedMap[str, bool] = CappedMap()
        # Writes of chunks so far, counted in buckets by user (people sharing a bucket only
        # cost a read again), and rollbacks: a cold load read outside the lock is kept only
        # if none of its person's came between (:meth:`user_vectors`).
        self._writes = [0] * WRITE_BUCKETS
        self._epoch = 0
        # A second connection, only for cold loads of a person's vectors (WAL readers never
        # wait for each other): opened on the first, behind its own lock.
        self._reader: Any = None
        self._reader_lock = threading.Lock()
        try:
            self.conn = connect(path)
            self.fts = fts.UserFts(self.conn, self.caches.cache("term_counts"))
            # True when the file is new or its schema/model changed: the caller must rebuild.
            self.needs_rebuild = self._prepare()
        except Exception as exc:
            if not is_damaged(exc):
                raise
            # The index is derived: keep the damaged file for inspection and rebuild.
            aside = set_aside(path)
            log.warning(
                "index %s is damaged (%s): set aside as %s, rebuilding from Markdown",
                path,
                exc,
                aside.name,
            )
            self.conn = connect(path)
            self.fts = fts.UserFts(self.conn, self.caches.cache("term_counts"))
            self.needs_rebuild = self._prepare()

    # -- schema (memory.index.schema) ------------------------------------------------------
    def _prepare(self) -> bool:
        with self._lock:
            return prepare(self.conn, self.fts, self.path, self.model, self.dim)

    @property
    def fts_refill_pending(self) -> bool:
        """True from an upgrade of a schema-2 file until :meth:`finish_fts_refill`."""
        with self._lock:
            row = self.conn.execute("SELECT 1 FROM meta WHERE key=?", (FTS_REFILL,)).fetchone()
        return row is not None

    def finish_fts_refill(self) -> None:
        """Record that every indexed chunk is in its user's FTS table again."""
        with self._lock:
            self.conn.execute("DELETE FROM meta WHERE key=?", (FTS_REFILL,))
            self.conn.commit()

    def users(self) -> list[str]:
        """Every user with indexed chunks."""
        with self._lock:
            rows = self.conn.execute("SELECT DISTINCT user_key FROM chunks").fetchall()
        return sorted(r[0] for r in rows)

    def chunk_keys(self, user_key: str, path: str) -> list[tuple[int, str, int, str, str]]:
        """(id, unit_id, ordinal, content hash, text) of every chunk indexed from a file."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT id, unit_id, ordinal, content_hash, text FROM chunks "
                "WHERE user_key=? AND path=?",
                (user_key, path),
            ).fetchall()
        return [(int(r[0]), r[1], int(r[2]), r[3], r[4]) for r in rows]

    def fill_fts(
        self, user_key: str, path: str, rows: Sequence[tuple[int, str, str]], stale: set[str]
    ) -> None:
        """Index ``(id, text, context)`` rows in the user's FTS table and drop ``stale`` units.

        A stale unit changed in the Markdown since it was indexed; the file's state is
        forgotten so the next sync indexes it anew.
        """
        with self._lock:
            try:
                for cid, text, context in rows:
                    self.fts.add(user_key, cid, space_cjk(text), space_cjk(context))
                if stale:
                    self._delete_units(user_key, path, sorted(stale))
                    self.conn.execute(
                        "DELETE FROM files WHERE user_key=? AND path=?", (user_key, path)
                    )
                self.conn.commit()
            except BaseException:
                self._rolled_back()
                raise

    def _rolled_back(self) -> None:
        self.conn.rollback()
        # The caches may hold rows or tables the rollback undid.
        self._epoch += 1
        self._vec_cache.clear()
        self.fts.forget_cached()
        self._rows.clear()
        self._memory_ids.clear()
        self._viewed.clear()

    def mark_rebuilt(self) -> None:
        """Record that a full rebuild finished."""
        self.needs_rebuild = False

    # -- writes ------------------------------------------------------------------------
    def indexed_units(self, user_key: str, path: str) -> dict[str, str]:
        """unit_id -> content hash of what is indexed from one file."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT DISTINCT unit_id, content_hash FROM chunks WHERE user_key=? AND path=?",
                (user_key, path),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    def indexed_paths(self, user_key: str) -> set[str]:
        """Every file path that has chunks for ``user_key``."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT DISTINCT path FROM chunks WHERE user_key=?", (user_key,)
            ).fetchall()
        return {r[0] for r in rows}

    def replace_units(
        self,
        user_key: str,
        path: str,
        remove: Iterable[str],
        add: Sequence[NewChunk],
        vectors: npt.NDArray[np.float32],
        views: Mapping[int, npt.NDArray[np.float32]] | None = None,
    ) -> None:
        """In one transaction: drop the chunks of ``remove`` units, insert ``add``.

        ``views``: the memory views (:mod:`memory.index.views`) of ``add``'s chunks, by their
        position in ``add``."""
        remove = list(remove)
        with self._lock:
            self._rows.pop(user_key, None)
            self._memory_ids.pop(user_key, None)
            self._wrote(user_key)
            added_ids: list[int] = []
            try:
                self._delete_units(user_key, path, remove)
                for pos, (chunk, vec) in enumerate(zip(add, vectors, strict=True)):
                    cur = self.conn.execute(
                        "INSERT INTO chunks (user_key, kind, path, unit_id, ordinal, "
                        "content_hash, section, date, line_start, line_end, importance, status, "
                        "tokens, refs, text) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (
                            chunk.user_key,
                            chunk.kind,
                            chunk.path,
                            chunk.unit_id,
                            chunk.ordinal,
                            chunk.content_hash,
                            chunk.section,
                            chunk.date,
                            chunk.line_start,
                            chunk.line_end,
                            chunk.importance,
                            chunk.status,
                            chunk.tokens,
                            json.dumps(list(chunk.refs), ensure_ascii=False),
                            chunk.text,
                        ),
                    )
                    rowid = cur.lastrowid
                    self.fts.add(
                        chunk.user_key, rowid, space_cjk(chunk.text), space_cjk(chunk.fts_text)
                    )
                    self.conn.execute(
                        "INSERT INTO chunk_vec (chunk_id, user_key, embedding) VALUES (?, ?, ?)",
                        (rowid, chunk.user_key, np.asarray(vec, dtype=np.float32).tobytes()),
                    )
                    view = (views or {}).get(pos)
                    if view is not None:
                        self.conn.execute(
                            "INSERT INTO memory_view (chunk_id, user_key, vec) VALUES (?, ?, ?)",
                            (rowid, chunk.user_key, np.asarray(view, dtype=np.float32).tobytes()),
                        )
                    added_ids.append(int(rowid))
                self.conn.commit()
            except BaseException:
                self._rolled_back()
                raise
            self._vec_cache.add(user_key, added_ids, vectors)

    def _delete_units(self, user_key: str, path: str, unit_ids: list[str]) -> None:
        for i in range(0, len(unit_ids), 500):
            part = unit_ids[i : i + 500]
            marks = ",".join("?" * len(part))
            ids = [
                r[0]
                for r in self.conn.execute(
                    f"SELECT id FROM chunks WHERE user_key=? AND path=? AND unit_id IN ({marks})",
                    (user_key, path, *part),
                ).fetchall()
            ]
            self._delete_ids(user_key, ids)

    def _any_memory(self, ids: list[int]) -> bool:
        """True when one of the chunks ``ids`` is a MEMORY.md entry's."""
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            row = self.conn.execute(
                f"SELECT 1 FROM chunks WHERE kind=? AND id IN ({marks}) LIMIT 1",
                (KIND_MEMORY, *part),
            ).fetchone()
            if row is not None:
                return True
        return False

    def _wrote(self, user_key: str) -> None:
        self._writes[_bucket(user_key)] += 1

    def _delete_ids(self, user_key: str, ids: list[int]) -> None:
        self._wrote(user_key)
        if ids and self._any_memory(ids):
            # A changed or forgotten memory: its summary may be in a description's vector.
            self.conn.execute("DELETE FROM passage_vec WHERE user_key=?", (user_key,))
            # And the person's usual line (agent.background): a forgotten line may be in it.
            self.conn.execute("DELETE FROM line_background WHERE user_key=?", (user_key,))
        self._vec_cache.drop(ids)
        self._rows.pop(user_key, None)
        self._memory_ids.pop(user_key, None)
        self.fts.delete(user_key, ids)
        # One key at a time: vec0 scans every user's vectors for ``IN (...)`` (see
        # :meth:`_vectors_of`).
        self.conn.executemany("DELETE FROM chunk_vec WHERE chunk_id = ?", [(i,) for i in ids])
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            self.conn.execute(f"DELETE FROM memory_view WHERE chunk_id IN ({marks})", part)
            self.conn.execute(f"DELETE FROM chunks WHERE id IN ({marks})", part)

    def memory_ids(self, user_key: str) -> npt.NDArray[np.int64]:
        """The chunk ids of the user's confirmed memories (kind ``memory``), sorted; read
        again only after the user's chunks changed (every search asks)."""
        with self._lock:
            self._check_version()
            ids = self._memory_ids.get(user_key)
            if ids is None:
                rows = self.conn.execute(
                    "SELECT id FROM chunks WHERE user_key=? AND kind=? ORDER BY id",
                    (user_key, KIND_MEMORY),
                ).fetchall()
                ids = np.asarray([r[0] for r in rows], dtype=np.int64)
                self._memory_ids[user_key] = ids
        return ids

    def memory_views(
        self, user_key: str, ids: Sequence[int]
    ) -> dict[int, npt.NDArray[np.float32]]:
        """The stored memory views of the user's chunks ``ids`` (those that have one)."""
        out: dict[int, npt.NDArray[np.float32]] = {}
        with self._lock:
            for i in range(0, len(ids), 500):
                part = list(ids[i : i + 500])
                marks = ",".join("?" * len(part))
                rows = self.conn.execute(
                    f"SELECT chunk_id, vec FROM memory_view WHERE user_key=? "
                    f"AND chunk_id IN ({marks})",
                    (user_key, *part),
                ).fetchall()
                out.update({int(r[0]): np.frombuffer(r[1], dtype=np.float32).copy() for r in rows})
        return out

    def memories_without_view(self, user_key: str) -> list[tuple[int, str]]:
        """(chunk id, index text) of the user's memories with no view yet (an index built
        before views). Once none is, the user is not asked about again: a memory written
        since came with its view (the deferred work asks after every turn)."""
        with self._lock:
            self._check_version()
            if self._viewed.get(user_key):
                return []
            rows = self.conn.execute(
                "SELECT c.id, c.text FROM chunks AS c LEFT JOIN memory_view AS m "
                "ON m.chunk_id = c.id WHERE c.user_key=? AND c.kind=? AND m.chunk_id IS NULL",
                (user_key, KIND_MEMORY),
            ).fetchall()
            if not rows:
                self._viewed[user_key] = True
        return [(int(r[0]), str(r[1])) for r in rows]

    def add_memory_views(
        self, user_key: str, views: Mapping[int, npt.NDArray[np.float32]]
    ) -> None:
        """Store views of the user's memory chunks that still exist (one transaction)."""
        with self._lock:
            try:
                for cid, vec in views.items():
                    self.conn.execute(
                        "INSERT OR REPLACE INTO memory_view (chunk_id, user_key, vec) "
                        "SELECT id, user_key, ? FROM chunks WHERE id=? AND user_key=?",
                        (np.asarray(vec, dtype=np.float32).tobytes(), cid, user_key),
                    )
                self.conn.commit()
            except BaseException:
                self._rolled_back()
                raise

    def passage_vectors(
        self, user_key: str, keys: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        """The stored passage vectors of ``keys`` the user has (see :meth:`keep_passages`)."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        with self._lock:
            rows = self.conn.execute(
                f"SELECT key, vec FROM passage_vec WHERE user_key=? AND key IN ({marks})",
                (user_key, *keys),
            ).fetchall()
        return {r[0]: np.frombuffer(r[1], dtype=np.float32).copy() for r in rows}

    def keep_passages(self, user_key: str, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """Store the user's current passage vectors by key; the user's others go."""
        with self._lock:
            marks = ",".join("?" * len(vectors))
            self.conn.execute(
                f"DELETE FROM passage_vec WHERE user_key=? AND key NOT IN ({marks})",
                (user_key, *vectors),
            )
            self.conn.executemany(
                "INSERT OR REPLACE INTO passage_vec (user_key, key, vec) VALUES (?,?,?)",
                [
                    (user_key, k, np.asarray(v, dtype=np.float32).tobytes())
                    for k, v in vectors.items()
                ],
            )
            self.conn.commit()

    def line_background(self, user_key: str) -> tuple[npt.NDArray[np.float32], float, int] | None:
        """The person's usual line as kept (agent.background): (decayed sum, weight, lines),
        or None (none yet, or a vector of another size)."""
        with self._lock:
            row = self.conn.execute(
                "SELECT weight, lines, vec FROM line_background WHERE user_key=?", (user_key,)
            ).fetchone()
        if row is None or len(row[2]) != 4 * self.dim:
            return None
        return np.frombuffer(row[2], dtype=np.float32).copy(), float(row[0]), int(row[1])

    def keep_line_background(
        self, user_key: str, total: npt.NDArray[np.float32], weight: float, lines: int
    ) -> None:
        """Store the person's usual line (agent.background)."""
        with self._lock:
            try:
                self.conn.execute(
                    "INSERT OR REPLACE INTO line_background (user_key, weight, lines, vec) "
                    "VALUES (?, ?, ?, ?)",
                    (user_key, weight, lines, np.asarray(total, dtype=np.float32).tobytes()),
                )
                self.conn.commit()
            except BaseException:
                self._rolled_back()
                raise

    def delete_path(self, user_key: str, path: str) -> None:
        """Drop everything indexed from one file."""
        with self._lock:
            ids = [
                r[0]
                for r in self.conn.execute(
                    "SELECT id FROM chunks WHERE user_key=? AND path=?", (user_key, path)
                ).fetchall()
            ]
            self._delete_ids(user_key, ids)
            self.conn.execute("DELETE FROM files WHERE user_key=? AND path=?", (user_key, path))
            self.conn.commit()

    def scrub(self) -> None:
        """Leave no trace of deleted rows in the file (after a forget).

        Deleted rows are zeroed (``secure_delete``), but FTS5 keeps a deleted row's terms in
        its segments until they are merged, and the WAL keeps old page images until a
        checkpoint: ``optimize`` merges every segment (about a second at 100,000 chunks), and
        a truncating checkpoint empties the WAL.
        """
        with self._lock:
            self.fts.optimize()
            self.conn.commit()
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def file_state(self, user_key: str, path: str) -> tuple[int, int] | None:
        """(mtime_ns, size) of a file when it was last indexed."""
        with self._lock:
            row = self.conn.execute(
                "SELECT mtime_ns, size FROM files WHERE user_key=? AND path=?", (user_key, path)
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def file_states(self, user_key: str) -> dict[str, tuple[int, int]]:
        """path -> (mtime_ns, size) of every file of ``user_key`` when it was last indexed."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT path, mtime_ns, size FROM files WHERE user_key=?", (user_key,)
            ).fetchall()
        return {r[0]: (int(r[1]), int(r[2])) for r in rows}

    def set_file_state(self, user_key: str, path: str, mtime_ns: int, size: int) -> None:
        """Remember the (mtime_ns, size) a file had when it was indexed."""
        with self._lock:
            self.conn.execute(
                "INSERT OR REPLACE INTO files (user_key, path, mtime_ns, size) VALUES (?,?,?,?)",
                (user_key, path, mtime_ns, size),
            )
            self.conn.commit()

    # -- reads -------------------------------------------------------------------------
    def fts_search(self, user_key: str, match: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, bm25) for ``user_key``, best first. ``bm25`` is FTS5's: lower is better."""
        if not match:
            return []
        with self._lock:
            self._check_version()
            return self.fts.search(user_key, match, limit)

    def doc_counts(self, user_key: str, terms: Sequence[str]) -> tuple[list[int], int]:
        """(document frequency of each quoted FTS5 term, rows) in ``user_key``'s FTS table.

        See :meth:`memory.index.fts.UserFts.doc_counts`: the user's table is what FTS5's IDF
        counts.
        """
        with self._lock:
            rows = self._row_count(user_key)
            return self.fts.doc_counts(user_key, terms, rows), rows

    def _check_version(self) -> None:
        # data_version changes when another connection (another process) commits.
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self._vec_cache_version:
            self._vec_cache.clear()
            self._vec_cache_version = version
            self._rows.clear()
            self._memory_ids.clear()
            self._viewed.clear()
            # Another process may have rebuilt the file, numbering the users' tables anew.
            self.fts.forget_names()

    def _row_count(self, user_key: str) -> int:
        self._check_version()
        rows = self._rows.get(user_key)
        if rows is None:
            rows = int(
                self.conn.execute(
                    "SELECT count(*) FROM chunks WHERE user_key=?", (user_key,)
                ).fetchone()[0]
            )
            self._rows[user_key] = rows
        return rows

    def vec_search(
        self,
        user_key: str,
        vector: npt.NDArray[np.float32],
        limit: int,
        loaded: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the nearest chunks of ``user_key``.

        Exact brute force like vec0's, over a cached in-memory matrix of the user's vectors
        (``loaded``: what :meth:`user_vectors` returned; the scan itself takes no lock).
        """
        ids, matrix = loaded if loaded is not None else self.user_vectors(user_key)
        return nearest(ids, matrix, vector, limit)

    def user_vectors(self, user_key: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The user's (sorted chunk ids, unit vectors), loaded once and kept in step."""
        with self._lock:
            cached = self._cached_vectors(user_key)
            if cached is not None:
                return cached
            # Read on the reader, outside the lock: a person's vectors take 15-25 ms to read,
            # and held under the lock they stalled every other turn's search and the
            # deferred indexing (1,000 people: one core of two used, bench/many_users.py).
            seen = self._generation(user_key)
            outside = not self.conn.in_transaction  # else what it sees is not committed yet
        rows = self._read_vectors(user_key) if outside else None
        with self._lock:
            cached = self._cached_vectors(user_key)
            if cached is not None:
                return cached
            if rows is None or self._generation(user_key) != seen:  # written meanwhile
                rows = self._user_rows(self.conn, user_key)  # read again, in step
            # Sorted by id, so :meth:`vectors` finds candidates with one binary search.
            return self._vec_cache.load(user_key, rows)

    def _cached_vectors(
        self, user_key: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        self._check_version()
        return self._vec_cache.get(user_key)

    def _generation(self, user_key: str) -> tuple[int, int, int]:
        """What changes when the user's chunks may have: their writes, a rollback, another
        process's commit."""
        return (self._writes[_bucket(user_key)], self._epoch, self._vec_cache_version)

    @staticmethod
    def _user_rows(conn: Any, user_key: str) -> list[tuple[int, bytes]]:
        """(chunk id, embedding blob) of every chunk of ``user_key``, in one statement.

        vec0 reads every user's vectors for ``WHERE user_key = ?`` and ``chunk_id IN (...)``
        (see :meth:`_vectors_of`); joined from ``chunks``, it is looked up by key row by row
        inside SQLite, without a Python call each (900 rows: 13-20 ms against 11-45).
        """
        rows = conn.execute(
            "SELECT v.chunk_id, v.embedding FROM chunks AS c "
            "JOIN chunk_vec AS v ON v.chunk_id = c.id WHERE c.user_key = ? ORDER BY c.id",
            (user_key,),
        ).fetchall()
        return [(int(r[0]), r[1]) for r in rows]

    def _read_vectors(self, user_key: str) -> list[tuple[int, bytes]] | None:
        """The user's (chunk id, blob) rows, read by the reader connection; None when it
        cannot be opened (the caller reads under the lock)."""
        with self._reader_lock:
            try:
                if self._reader is None:
                    self._reader = connect(self.path)
                    self._reader.execute("PRAGMA query_only=ON")
                self._reader.execute("BEGIN")
                try:
                    return self._user_rows(self._reader, user_key)
                finally:
                    self._reader.execute("COMMIT")
            except Exception as exc:  # the main connection still serves
                log.warning("index reader unavailable, vectors read under the lock: %s", exc)
                return None

    def _vectors_of(self, ids: Sequence[int]) -> list[tuple[int, bytes]]:
        """(chunk id, embedding blob) of these chunks, one primary-key lookup each.

        vec0 reads every user's vectors for a plain ``WHERE user_key = ?`` (its partition key
        narrows only a KNN query) and for ``chunk_id IN (...)`` alike: loading one person of
        900 chunks took 1-3 s among 120 people, and grew with everyone's; looked up by key,
        20-50 ms, whoever else is stored. A chunk without a vector is skipped (as before).
        """
        out: list[tuple[int, bytes]] = []
        for cid in ids:
            row = self.conn.execute(
                "SELECT chunk_id, embedding FROM chunk_vec WHERE chunk_id = ?", (cid,)
            ).fetchone()
            if row is not None:
                out.append((int(row[0]), row[1]))
        return out

    def chunks(self, ids: Sequence[int]) -> dict[int, Chunk]:
        """The chunks with these ids."""
        out: dict[int, Chunk] = {}
        with self._lock:
            for i in range(0, len(ids), 500):
                part = list(ids[i : i + 500])
                marks = ",".join("?" * len(part))
                for row in self.conn.execute(
                    f"SELECT * FROM chunks WHERE id IN ({marks})", part
                ).fetchall():
                    chunk = row_to_chunk(row)
                    out[chunk.id] = chunk
        return out

    def file_order(self, user_key: str, paths: Iterable[str]) -> dict[str, list[int]]:
        """The chunk ids of each of these files of ``user_key``, in file (line) order."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, list[int]] = {p: [] for p in wanted}
        if not wanted:
            return out
        marks = ",".join("?" * len(wanted))
        with self._lock:
            rows = self.conn.execute(
                f"SELECT path, id FROM chunks WHERE user_key = ? AND path IN ({marks}) "
                "ORDER BY path, line_start, ordinal",
                (user_key, *wanted),
            ).fetchall()
        for path, cid in rows:
            out[path].append(int(cid))
        return out

    def vectors(
        self, ids: Sequence[int], user_key: str | None = None
    ) -> dict[int, npt.NDArray[np.float32]]:
        """The stored vectors of these chunks (from the user's cached matrix if named)."""
        out: dict[int, npt.NDArray[np.float32]] = {}
        if user_key is not None:
            return pick(*self.user_vectors(user_key), ids)
        with self._lock:
            for cid, blob in self._vectors_of(list(dict.fromkeys(ids))):
                out[cid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def count(self, user_key: str | None = None) -> int:
        """Number of chunks (of one user, or of all)."""
        with self._lock:
            if user_key is None:
                return int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
            return int(
                self.conn.execute(
                    "SELECT count(*) FROM chunks WHERE user_key=?", (user_key,)
                ).fetchone()[0]
            )

    def close(self) -> None:
        """Close the connections."""
        with self._lock:
            self.conn.close()
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
