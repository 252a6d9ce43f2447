"""Access counts of memories in ``pcai.db`` (the retrieval and health scores' frequency).

A memory's count goes up by one each time it is injected into a prompt. Counts live in the
operational database, not in MEMORY.md, so that reading a memory never rewrites the file a
person edits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from memory.base.users import check_user_key
from memory.state.statedb import StateDB


@dataclass(frozen=True, slots=True)
class AccessStat:
    """How often a memory was injected, and when last (ISO time, "" when never)."""

    count: int = 0
    last_access: str = ""


class AccessCounter:
    """Counts how often each memory of each user was injected."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def bump(self, user_key: str, entry_ids: Iterable[str], now: datetime) -> None:
        """Add one to the count of each id (each id once, however often it is listed)."""
        check_user_key(user_key)
        stamp = now.isoformat(timespec="seconds")
        rows = [(user_key, eid, stamp) for eid in dict.fromkeys(entry_ids) if eid]
        if not rows:
            return
        with self.state.transaction() as conn:
            conn.executemany(
                "INSERT INTO memory_access (user_key, entry_id, access_count, last_access) "
                "VALUES (?, ?, 1, ?) ON CONFLICT(user_key, entry_id) DO UPDATE SET "
                "access_count = access_count + 1, last_access = excluded.last_access",
                rows,
            )

    def get(self, user_key: str, entry_id: str) -> AccessStat:
        """The count and last access of one memory."""
        return self.get_many(user_key).get(entry_id, AccessStat())

    def get_many(self, user_key: str) -> dict[str, AccessStat]:
        """entry id -> access stat for every memory of a user that was ever injected."""
        check_user_key(user_key)
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT entry_id, access_count, last_access FROM memory_access WHERE user_key=?",
                (user_key,),
            ).fetchall()
        return {r[0]: AccessStat(int(r[1]), str(r[2])) for r in rows}

    def inherit(self, user_key: str, new_id: str, old_ids: Iterable[str]) -> AccessStat:
        """A new version starts with the use of the versions it replaced (their sum, latest
        access); returns what it has. A version is the same memory: its use carries over.
        Taking the larger of its own count and the sum makes a repeated call change nothing."""
        stats = self.get_many(user_key)
        olds = [stats[i] for i in dict.fromkeys(old_ids) if i in stats and i != new_id]
        mine = stats.get(new_id, AccessStat())
        got = AccessStat(
            max(mine.count, sum(s.count for s in olds)),
            max([mine.last_access, *(s.last_access for s in olds)]),
        )
        if got != mine:
            with self.state.transaction() as conn:
                conn.execute(
                    "INSERT INTO memory_access (user_key, entry_id, access_count, last_access) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(user_key, entry_id) DO UPDATE SET "
                    "access_count = excluded.access_count, last_access = excluded.last_access",
                    (user_key, new_id, got.count, got.last_access),
                )
        return got

    def forget(self, user_key: str, entry_id: str) -> None:
        """Drop the counter of a memory that was deleted."""
        with self.state.transaction() as conn:
            conn.execute(
                "DELETE FROM memory_access WHERE user_key=? AND entry_id=?", (user_key, entry_id)
            )
