"""Access counts of memories in ``pcai.db`` (the retrieval and health scores' frequency).

A count says how often the user used a memory, not how often the bot chose it: an explicit
act (:meth:`AccessCounter.bump`, reached only through
:meth:`~memory.write.governance.Governance.used`: the memory's page opened, pinned or unpinned,
scoped, edited, kept, restored) adds one each time,
while an injection into a prompt (:meth:`AccessCounter.injected`) adds one at most once per
conversation (not again until the memory went unused for ``gap``). Counting every injection
let the first memories injected keep being injected (issue 24): the count is a signal that
the bot's own choices must not move much. Counts live in the operational database, not in
MEMORY.md, so that reading a memory never rewrites the file a person edits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.base.users import check_user_key
from memory.state.statedb import StateDB


@dataclass(frozen=True, slots=True)
class AccessStat:
    """How often a memory was used, and when last (ISO time, "" when never)."""

    count: int = 0
    last_access: str = ""


class AccessCounter:
    """Counts how often each memory of each user was used."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def bump(self, user_key: str, entry_ids: Iterable[str], now: datetime) -> None:
        """The user's explicit use: one more for each id (each id once, however often listed)."""
        self._add(user_key, entry_ids, now, None)

    def injected(
        self, user_key: str, entry_ids: Iterable[str], now: datetime, gap: timedelta
    ) -> None:
        """The bot put these memories into a prompt: one more for each id whose last use is
        ``gap`` or longer ago (once per conversation); within it, only the time is kept."""
        self._add(user_key, entry_ids, now, now - gap)

    def _add(
        self, user_key: str, entry_ids: Iterable[str], now: datetime, before: datetime | None
    ) -> None:
        check_user_key(user_key)
        stamp = now.isoformat(timespec="seconds")
        # ISO times of one zone compare as text; a use written in another zone, or none
        # (""), counts as long ago: at worst one more count, never a lost one.
        cut = before.isoformat(timespec="seconds") if before is not None else None
        rows = [(user_key, eid, stamp, cut) for eid in dict.fromkeys(entry_ids) if eid]
        if not rows:
            return
        with self.state.transaction() as conn:
            conn.executemany(
                "INSERT INTO memory_access (user_key, entry_id, access_count, last_access) "
                "VALUES (?1, ?2, 1, ?3) ON CONFLICT(user_key, entry_id) DO UPDATE SET "
                "access_count = access_count + (CASE WHEN ?4 IS NULL "
                "OR substr(last_access, 20) != substr(?3, 20) OR last_access <= ?4 "
                "THEN 1 ELSE 0 END), last_access = excluded.last_access",
                rows,
            )

    def get(self, user_key: str, entry_id: str) -> AccessStat:
        """The count and last access of one memory."""
        return self.get_many(user_key).get(entry_id, AccessStat())

    def get_many(self, user_key: str) -> dict[str, AccessStat]:
        """entry id -> access stat for every memory of a user that was ever used."""
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
