"""The derived search index: ``knowledge/pcai_memory.sqlite``.

Tables: ``chunks`` (text and source of every indexed piece), ``chunks_fts`` (FTS5 over the
CJK-spaced text, BM25), ``chunk_vec`` (sqlite-vec ``vec0``, cosine distance, partitioned by
user), ``files`` (what was indexed from which file, for change detection) and ``meta``
(embedding model and dimension). Nothing here is the truth: deleting the file loses nothing,
the indexer rebuilds it from the Markdown.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.base.db import connect, is_damaged, set_aside
from memory.index.text import space_cjk

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
# BM25 weight of the context column (a log record's neighbours) against its own text (1.0):
# a neighbour's words should lift a record a little, never outrank the record that said them.
FTS_CONTEXT_WEIGHT = 0.3

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL DEFAULT 0,
    content_hash TEXT NOT NULL,
    section TEXT NOT NULL DEFAULT '',
    date TEXT NOT NULL DEFAULT '',
    line_start INTEGER NOT NULL DEFAULT 0,
    line_end INTEGER NOT NULL DEFAULT 0,
    importance REAL NOT NULL DEFAULT 0.7,
    status TEXT NOT NULL DEFAULT 'active',
    tokens INTEGER NOT NULL DEFAULT 0,
    refs TEXT NOT NULL DEFAULT '[]',
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_unit ON chunks (user_key, path, unit_id);
-- Covering index for the FTS user filter: the join reads (id, user_key) pairs from this small
-- b-tree instead of each chunk's row with its text (halves BM25 search at 100,000 chunks).
CREATE INDEX IF NOT EXISTS chunks_id_user ON chunks (id, user_key);
CREATE TABLE IF NOT EXISTS files (
    user_key TEXT NOT NULL,
    path TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (user_key, path)
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    body, context, content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2'
);
"""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One indexed piece of text and where it came from."""

    id: int
    user_key: str
    kind: str
    path: str
    unit_id: str
    ordinal: int
    section: str
    date: str
    line_start: int
    line_end: int
    importance: float
    status: str
    tokens: int
    refs: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk about to be written (no id yet)."""

    user_key: str
    kind: str
    path: str
    unit_id: str
    ordinal: int
    content_hash: str
    section: str
    date: str
    line_start: int
    line_end: int
    importance: float
    status: str
    tokens: int
    refs: tuple[str, ...]
    text: str
    fts_text: str = ""


def _row_to_chunk(row: Any) -> Chunk:
    return Chunk(
        id=int(row["id"]),
        user_key=row["user_key"],
        kind=row["kind"],
        path=row["path"],
        unit_id=row["unit_id"],
        ordinal=int(row["ordinal"]),
        section=row["section"],
        date=row["date"],
        line_start=int(row["line_start"]),
        line_end=int(row["line_end"]),
        importance=float(row["importance"]),
        status=row["status"],
        tokens=int(row["tokens"]),
        refs=tuple(json.loads(row["refs"])),
        text=row["text"],
    )


class IndexStore:
    """Reads and writes the index database. Thread-safe behind one lock."""

    def __init__(self, path: Path, model: str, dim: int) -> None:
        self.path = path
        self.model = model
        self.dim = dim
        self._lock = threading.RLock()
        # Per-user copy of the vectors for brute-force KNN with numpy (one matrix product
        # instead of vec0's scan: ~10x faster at 100,000 chunks); dropped on every write.
        self._vec_cache: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}
        self._vec_cache_version = -1
        # FTS document frequencies of query terms (global, like FTS5's own BM25 statistics),
        # for dropping near-stopwords before matching; see :meth:`doc_counts`.
        self._df_cache: dict[str, int] = {}
        self._df_rows = -1
        self._rows = -1
        try:
            self.conn = connect(path)
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
            self.needs_rebuild = self._prepare()

    # -- schema ------------------------------------------------------------------------
    def _prepare(self) -> bool:
        with self._lock:
            version = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
            fresh = version == 0
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.path} has schema {version}, newer than this PCAI ({SCHEMA_VERSION})"
                )
            if version < SCHEMA_VERSION and not fresh:
                # A derived index: an old schema is dropped and rebuilt from the Markdown.
                self._drop_all()
                fresh = True
            self.conn.executescript(_SCHEMA_V1)
            self.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
            changed = meta.get("embed_model") != self.model or meta.get("embed_dim") != str(
                self.dim
            )
            if changed and not fresh:
                self._drop_all()
                self.conn.executescript(_SCHEMA_V1)
            self._create_vec()
            self.conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("embed_model", self.model), ("embed_dim", str(self.dim))],
            )
            self.conn.commit()
            return fresh or changed

    def _create_vec(self) -> None:
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vec USING vec0("
            "chunk_id INTEGER PRIMARY KEY, user_key TEXT PARTITION KEY, "
            f"embedding float[{self.dim}] distance_metric=cosine)"
        )

    def _drop_all(self) -> None:
        for table in ("chunk_vec", "chunks_fts", "chunks", "files", "meta"):
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")
        self.conn.commit()

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
    ) -> None:
        """In one transaction: drop the chunks of ``remove`` units, insert ``add``."""
        remove = list(remove)
        with self._lock:
            self._rows = -1
            added_ids: list[int] = []
            try:
                self._delete_units(user_key, path, remove)
                for chunk, vec in zip(add, vectors, strict=True):
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
                    self.conn.execute(
                        "INSERT INTO chunks_fts (rowid, body, context) VALUES (?, ?, ?)",
                        (rowid, space_cjk(chunk.text), space_cjk(chunk.fts_text)),
                    )
                    self.conn.execute(
                        "INSERT INTO chunk_vec (chunk_id, user_key, embedding) VALUES (?, ?, ?)",
                        (rowid, chunk.user_key, np.asarray(vec, dtype=np.float32).tobytes()),
                    )
                    added_ids.append(int(rowid))
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                self._vec_cache.clear()  # the cache may hold rows the rollback undid
                raise
            self._cache_add(user_key, added_ids, vectors)

    def _cache_add(self, user_key: str, ids: list[int], vectors: npt.NDArray[np.float32]) -> None:
        # Our own writes update the cached matrix in place: reloading every vector of the
        # user after each appended log line cost ~20 ms a message at 10,000 chunks.
        cached = self._vec_cache.get(user_key)
        if cached is None or not ids:
            return
        rows = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim).copy()
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        rows /= np.where(norms == 0, 1.0, norms)
        all_ids = np.concatenate([cached[0], np.asarray(ids, dtype=np.int64)])
        matrix = np.vstack([cached[1], rows])
        order = np.argsort(all_ids, kind="stable")
        self._vec_cache[user_key] = (all_ids[order], matrix[order])

    def _cache_drop(self, ids: list[int]) -> None:
        if not ids:
            return
        gone = np.asarray(ids, dtype=np.int64)
        for user_key, (cached_ids, matrix) in list(self._vec_cache.items()):
            keep = ~np.isin(cached_ids, gone)
            if not keep.all():
                self._vec_cache[user_key] = (cached_ids[keep], matrix[keep])

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
            self._delete_ids(ids)

    def _delete_ids(self, ids: list[int]) -> None:
        self._cache_drop(ids)
        self._rows = -1
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            self.conn.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({marks})", part)
            self.conn.execute(f"DELETE FROM chunk_vec WHERE chunk_id IN ({marks})", part)
            self.conn.execute(f"DELETE FROM chunks WHERE id IN ({marks})", part)

    def delete_path(self, user_key: str, path: str) -> None:
        """Drop everything indexed from one file."""
        with self._lock:
            ids = [
                r[0]
                for r in self.conn.execute(
                    "SELECT id FROM chunks WHERE user_key=? AND path=?", (user_key, path)
                ).fetchall()
            ]
            self._delete_ids(ids)
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
            self.conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
            self.conn.commit()
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._df_cache.clear()

    def file_state(self, user_key: str, path: str) -> tuple[int, int] | None:
        """(mtime_ns, size) of a file when it was last indexed."""
        with self._lock:
            row = self.conn.execute(
                "SELECT mtime_ns, size FROM files WHERE user_key=? AND path=?", (user_key, path)
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else None

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
            rows = self.conn.execute(
                # CROSS JOIN keeps FTS as the outer loop: otherwise SQLite may walk the
                # user's chunks and run the MATCH once per row (seconds at 10,000 chunks).
                "SELECT c.id, bm25(chunks_fts, 1.0, ?) AS score FROM chunks_fts "
                "CROSS JOIN chunks c INDEXED BY chunks_id_user ON c.id = chunks_fts.rowid "
                "WHERE chunks_fts MATCH ? AND c.user_key = ? ORDER BY score LIMIT ?",
                (FTS_CONTEXT_WEIGHT, match, user_key, limit),
            ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    # Counts at or above this are cached: they are the costly ones to count, and their ratio
    # to the row count barely moves as the index grows. Rarer terms are recounted every time
    # (cheap: their doclists are short), so a word written a minute ago is never missed.
    DF_CACHE_MIN = 50

    def doc_counts(self, terms: Sequence[str]) -> tuple[list[int], int]:
        """(document frequency of each quoted FTS5 term, rows in the index), all users together.

        A phrase (a CJK pair, ``"咖 啡"``) counts as its most frequent token: FTS5 reads every
        token's whole doclist to match a phrase, so that is what the term costs, and a pair
        with a character that common is mostly a particle or pronoun combination. FTS5
        computes BM25's IDF over the whole table, so whole-table counts are what decide how
        much a term can weigh. Cached counts are dropped when the row count has moved by more
        than 10% since they were taken.
        """
        with self._lock:
            rows = self._row_count()
            if self._df_rows < 0 or abs(rows - self._df_rows) > 0.1 * max(self._df_rows, 1):
                self._df_cache.clear()
                self._df_rows = rows
            out: list[int] = []
            for term in terms:
                tokens = term.strip('"').replace('""', '"').split() or [term]
                counts = [self._token_count(tok) for tok in tokens]
                # A phrase that matches nothing stays at 0 (so it is dropped) only when one of
                # its tokens is absent; otherwise its cost is its most frequent token.
                out.append(0 if min(counts) == 0 else max(counts))
            return out, rows

    def _token_count(self, token: str) -> int:
        df = self._df_cache.get(token)
        if df is None:
            quoted = '"' + token.replace('"', '""') + '"'
            df = int(
                self.conn.execute(
                    "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (quoted,)
                ).fetchone()[0]
            )
            if df >= self.DF_CACHE_MIN:
                if len(self._df_cache) > 100_000:
                    self._df_cache.clear()
                self._df_cache[token] = df
        return df

    def _row_count(self) -> int:
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self._vec_cache_version:
            self._vec_cache.clear()
            self._vec_cache_version = version
            self._rows = -1
        if self._rows < 0:
            self._rows = int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        return self._rows

    def vec_search(
        self, user_key: str, vector: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the nearest chunks of ``user_key``.

        Exact brute force like vec0's, over a cached in-memory matrix of the user's vectors.
        """
        ids, matrix = self._user_vectors(user_key)
        if not len(ids) or limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        qn = float(np.linalg.norm(q)) or 1.0
        sims = matrix @ (q / qn)
        n = min(limit, len(ids))
        top = np.argpartition(-sims, n - 1)[:n] if n < len(ids) else np.arange(len(ids))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(ids[i]), 1.0 - float(sims[i])) for i in top]

    def _user_vectors(
        self, user_key: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        with self._lock:
            # data_version changes when another connection (another process) commits.
            version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
            if version != self._vec_cache_version:
                self._vec_cache.clear()
                self._rows = -1
                self._vec_cache_version = version
            cached = self._vec_cache.get(user_key)
            if cached is not None:
                return cached
            rows = self.conn.execute(
                "SELECT chunk_id, embedding FROM chunk_vec WHERE user_key = ?", (user_key,)
            ).fetchall()
            # Sorted by id, so :meth:`vectors` finds candidates with one binary search.
            rows.sort(key=lambda r: int(r[0]))
            ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
            if rows:
                matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                matrix = matrix.reshape(len(rows), self.dim).copy()
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                matrix /= np.where(norms == 0, 1.0, norms)
            else:
                matrix = np.zeros((0, self.dim), dtype=np.float32)
            self._vec_cache[user_key] = (ids, matrix)
            return ids, matrix

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
                    chunk = _row_to_chunk(row)
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
            all_ids, matrix = self._user_vectors(user_key)
            want = np.asarray(list(ids), dtype=np.int64)
            pos = np.searchsorted(all_ids, want)
            for cid, p in zip(want, pos, strict=True):
                if p < len(all_ids) and all_ids[p] == cid:
                    out[int(cid)] = matrix[p]
            return out
        with self._lock:
            for i in range(0, len(ids), 500):
                part = list(ids[i : i + 500])
                marks = ",".join("?" * len(part))
                for cid, blob in self.conn.execute(
                    f"SELECT chunk_id, embedding FROM chunk_vec WHERE chunk_id IN ({marks})", part
                ).fetchall():
                    out[int(cid)] = np.frombuffer(blob, dtype=np.float32)
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
        """Close the connection."""
        with self._lock:
            self.conn.close()
