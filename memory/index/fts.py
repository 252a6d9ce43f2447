"""The index's BM25 side: one FTS5 table per user, so a search reads only its user's postings.

A single table for everyone made every MATCH read and score the other users' rows too (then
drop them with a join on ``chunks``), and let their words set this user's IDF. With a table
per user, a search touches the user's doclists only, the ranking of one user's memories
depends on that user's text alone, and no join is needed. ``fts_tables`` maps each user to
the number in their table's name (``fts_u<n>``; a user key never appears in SQL text).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.base.lru import CappedMap, PoolCache

# BM25 weight of the context column (a log record's neighbours) against its own text (1.0):
# a neighbour's words should lift a record a little, never outrank the record that said them.
FTS_CONTEXT_WEIGHT = 0.3

# What a user's cached term counts cost: the entry, and each (token, count) in its dict.
COUNTS_BYTES = 400
TERM_BYTES = 120

SCHEMA = """
CREATE TABLE IF NOT EXISTS fts_tables (
    n INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL UNIQUE
);
"""

_TABLE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5("
    "body, context, content='', contentless_delete=1, "
    "tokenize='porter unicode61 remove_diacritics 2')"
)


class UserFts:
    """The per-user FTS5 tables of one connection. Not locked: the caller holds the store's."""

    # Counts at or above this are cached: they are the costly ones to count, and their ratio
    # to the row count barely moves as the index grows. Rarer terms are recounted every time
    # (cheap: their doclists are short), so a word written a minute ago is never missed.
    DF_CACHE_MIN = 50

    def __init__(self, conn: Any, counts: PoolCache[str, tuple[int, dict[str, int]]]) -> None:
        self.conn = conn
        self._names: CappedMap[str, str] = CappedMap()  # read again from fts_tables past it
        # user -> (the user's row count when taken, token -> document frequency), in the
        # process's byte-budgeted pool: an evicted user's counts are counted again.
        self._df = counts

    def forget_cached(self) -> None:
        """Drop cached table names and counts (after a rollback, a drop or a scrub)."""
        self._names.clear()
        self._df.clear()

    def forget_names(self) -> None:
        """Drop cached table names (another connection committed; its map is the truth)."""
        self._names.clear()

    def table(self, user_key: str, *, create: bool = False) -> str | None:
        """The name of ``user_key``'s FTS table; made (in the caller's transaction) if asked."""
        name = self._names.get(user_key)
        if name is not None:
            return name
        row = self.conn.execute(
            "SELECT n FROM fts_tables WHERE user_key = ?", (user_key,)
        ).fetchone()
        if row is not None:
            name = f"fts_u{int(row[0])}"
        elif create:
            n = self.conn.execute(
                "INSERT INTO fts_tables (user_key) VALUES (?)", (user_key,)
            ).lastrowid
            name = f"fts_u{int(n)}"
            self.conn.execute(_TABLE.format(name=name))
        else:
            return None
        self._names[user_key] = name
        return name

    def tables(self) -> list[str]:
        """Every user's table name."""
        return [f"fts_u{int(r[0])}" for r in self.conn.execute("SELECT n FROM fts_tables")]

    def add(self, user_key: str, rowid: int, body: str, context: str) -> None:
        """Index one chunk (already CJK-spaced) under its ``chunks`` id."""
        name = self.table(user_key, create=True)
        self.conn.execute(
            f"INSERT INTO {name} (rowid, body, context) VALUES (?, ?, ?)", (rowid, body, context)
        )

    def delete(self, user_key: str, ids: Sequence[int]) -> None:
        """Drop these chunks of ``user_key`` from their FTS table."""
        name = self.table(user_key)
        if name is None:
            return
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            marks = ",".join("?" * len(part))
            self.conn.execute(f"DELETE FROM {name} WHERE rowid IN ({marks})", part)

    def drop_all(self) -> None:
        """Drop every user's table and the map (a full rebuild follows)."""
        have = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if "fts_tables" in have:
            for name in self.tables():
                self.conn.execute(f"DROP TABLE IF EXISTS {name}")
        self.conn.execute("DROP TABLE IF EXISTS fts_tables")
        self.forget_cached()

    def optimize(self) -> None:
        """Merge every table's segments (a deleted row's terms leave the file only then)."""
        for name in self.tables():
            self.conn.execute(f"INSERT INTO {name} ({name}) VALUES ('optimize')")
        self._df.clear()

    def search(self, user_key: str, match: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, bm25) of ``user_key``'s best matches; FTS5's bm25: lower is better."""
        name = self.table(user_key)
        if name is None or not match:
            return []
        rows = self.conn.execute(
            f"SELECT rowid, bm25({name}, 1.0, ?) AS score FROM {name} "
            f"WHERE {name} MATCH ? ORDER BY score LIMIT ?",
            (FTS_CONTEXT_WEIGHT, match, limit),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def doc_counts(self, user_key: str, terms: Sequence[str], rows: int) -> list[int]:
        """The document frequency of each quoted FTS5 term in ``user_key``'s table.

        A phrase (a CJK pair, ``"咖 啡"``) counts as its most frequent token: FTS5 reads every
        token's whole doclist to match a phrase, so that is what the term costs, and a pair
        with a character that common is mostly a particle or pronoun combination. These are
        the counts FTS5's IDF uses (the user's table). Cached counts are dropped when the
        user's row count ``rows`` has moved by more than 10% since they were taken.
        """
        name = self.table(user_key)
        if name is None:
            return [0] * len(terms)
        taken, cache = self._df.get(user_key) or (-1, {})
        if taken < 0 or abs(rows - taken) > 0.1 * max(taken, 1):
            taken, cache = rows, {}
        out: list[int] = []
        for term in terms:
            tokens = term.strip('"').replace('""', '"').split() or [term]
            counts = [self._token_count(name, cache, tok) for tok in tokens]
            # A phrase that matches nothing stays at 0 (so it is dropped) only when one of
            # its tokens is absent; otherwise its cost is its most frequent token.
            out.append(0 if min(counts) == 0 else max(counts))
        self._df.put(user_key, (taken, cache), COUNTS_BYTES + TERM_BYTES * len(cache))
        return out

    def _token_count(self, name: str, cache: dict[str, int], token: str) -> int:
        df = cache.get(token)
        if df is None:
            quoted = '"' + token.replace('"', '""') + '"'
            df = int(
                self.conn.execute(
                    f"SELECT count(*) FROM {name} WHERE {name} MATCH ?", (quoted,)
                ).fetchone()[0]
            )
            if df >= self.DF_CACHE_MIN:
                if len(cache) > 100_000:
                    cache.clear()
                cache[token] = df
        return df
