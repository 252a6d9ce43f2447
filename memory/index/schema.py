"""The index file's schema: its tables, their row types, and opening an older file.

The index is derived from the Markdown: an unknown older schema is dropped and rebuilt, a
newer one is refused, and schema 2 (one FTS table for all users) is upgraded in place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.index.fts import SCHEMA as FTS_SCHEMA
from memory.index.fts import UserFts
from memory.index.views import VIEW_KIND

# 3: one FTS table per user (2 had one for everyone; 2 is upgraded in place, see _from_v2).
SCHEMA_VERSION = 3
# In ``meta`` while the FTS rows of an upgraded schema-2 file are still to be refilled.
FTS_REFILL = "fts_refill"
# In ``meta``: how the stored memory views were made (memory.index.views.VIEW_KIND).
VIEWS = "memory_views"

_SCHEMA = """
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
CREATE TABLE IF NOT EXISTS files (
    user_key TEXT NOT NULL,
    path TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (user_key, path)
);
-- A person's section descriptions' vectors (memory.index.passages), keyed by a hash of the
-- embedder's name and the text: a cold turn embeds only its query. Dropped with the user's
-- chunks, so a forgotten memory's summary leaves no vector behind.
CREATE TABLE IF NOT EXISTS passage_vec (
    user_key TEXT NOT NULL,
    key TEXT NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (user_key, key)
);
-- A confirmed memory's second view (memory.index.views): its passage vector plus its text
-- embedded as a query, normalised. The order among the memories a turn found is decided on
-- it; a row goes with its chunk (forget, edit), so no memory's vector outlives it.
CREATE TABLE IF NOT EXISTS memory_view (
    chunk_id INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL,
    vec BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_view_by_user ON memory_view (user_key);
-- A person's usual line (agent.background): the decayed sum of the query vectors of their
-- lines, its weight, and how many lines joined. Dropped when one of the person's memories is
-- forgotten or changed (a forgotten line may be in it), and with the index.
CREATE TABLE IF NOT EXISTS line_background (
    user_key TEXT PRIMARY KEY,
    weight REAL NOT NULL,
    lines INTEGER NOT NULL,
    vec BLOB NOT NULL
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


def row_to_chunk(row: Any) -> Chunk:
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


def prepare(conn: Any, fts: UserFts, path: Path, model: str, dim: int) -> bool:
    """Bring the file to this schema; True when it is new or its model changed (rebuild)."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    fresh = version == 0
    if version > SCHEMA_VERSION:
        raise RuntimeError(f"{path} has schema {version}, newer than this PCAI ({SCHEMA_VERSION})")
    if version == 2:
        _from_v2(conn)
    elif version < SCHEMA_VERSION and not fresh:
        # A derived index: an old schema is dropped and rebuilt from the Markdown.
        drop_all(conn, fts)
        fresh = True
    conn.executescript(_SCHEMA + FTS_SCHEMA)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    changed = meta.get("embed_model") != model or meta.get("embed_dim") != str(dim)
    if changed and not fresh:
        drop_all(conn, fts)
        conn.executescript(_SCHEMA + FTS_SCHEMA)
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vec USING vec0("
        "chunk_id INTEGER PRIMARY KEY, user_key TEXT PARTITION KEY, "
        f"embedding float[{dim}] distance_metric=cosine)"
    )
    if meta.get(VIEWS) != VIEW_KIND:
        # Views made another way (before the fold) are dropped; the deferred work makes each
        # person's again (Indexer.fill_views), and until then a memory orders on its vector.
        conn.execute("DELETE FROM memory_view")
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [("embed_model", model), ("embed_dim", str(dim)), (VIEWS, VIEW_KIND)],
    )
    conn.commit()
    return fresh or changed


def drop_all(conn: Any, fts: UserFts) -> None:
    """Drop every table (a full rebuild from the Markdown follows)."""
    fts.drop_all()
    for table in (
        "chunk_vec",
        "chunks_fts",
        "chunks",
        "files",
        "meta",
        "passage_vec",
        "memory_view",
        "line_background",
    ):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.commit()


def _from_v2(conn: Any) -> None:
    """Schema 2 -> 3: keep chunks and vectors, drop the shared FTS table.

    Its rows cannot be read back (contentless) and the context column's text is not in
    ``chunks``, so :meth:`memory.index.indexer.Indexer.refill_fts` puts each chunk in its user's
    table again from the Markdown, without embedding anything.
    """
    conn.execute("DROP TABLE IF EXISTS chunks_fts")
    conn.execute("DROP INDEX IF EXISTS chunks_id_user")  # served the old user join
    conn.executescript(_SCHEMA + FTS_SCHEMA)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, 'pending')", (FTS_REFILL,))
