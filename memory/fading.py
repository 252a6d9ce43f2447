"""Which fading memories each user was told about, and when (``pcai.db``).

The lifecycle (docs/memory-lifecycle.md, "Health and lifecycle") archives a memory whose
health fell below 0.15. Before it may,
the user gets a "these memories are fading: keep?" message (``bot.jobs``'s fading job), and
that telling is recorded here: the nightly job archives only what its owner was told about at
least ``fade_notice_days`` before (:mod:`memory.lifecycle`). A lost ``pcai.db`` loses these
rows, which only means the user is told again and the archive waits: never the other way.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from memory.state import StateDB
from memory.users import check_user_key


class FadeBook:
    """When each user was last told that a memory of theirs is fading."""

    def __init__(self, state: StateDB) -> None:
        self.state = state  # its table is migration m003 (memory.migrations)

    def told(self, user_key: str, entry_ids: Iterable[str], now: datetime) -> None:
        """Record that ``user_key`` was told (at ``now``) that these memories are fading."""
        check_user_key(user_key)
        rows = [(user_key, eid, now.timestamp()) for eid in dict.fromkeys(entry_ids) if eid]
        with self.state.transaction() as conn:
            conn.executemany(
                "INSERT INTO fading_notices (user_key, entry_id, told_ts) VALUES (?,?,?) "
                "ON CONFLICT (user_key, entry_id) DO UPDATE SET told_ts=excluded.told_ts",
                rows,
            )

    def told_at(self, user_key: str) -> dict[str, datetime]:
        """entry id -> when the user was told it is fading (UTC)."""
        check_user_key(user_key)
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT entry_id, told_ts FROM fading_notices WHERE user_key=?", (user_key,)
            ).fetchall()
        return {str(r[0]): datetime.fromtimestamp(float(r[1]), UTC) for r in rows}

    def drop(self, user_key: str, entry_ids: Iterable[str]) -> None:
        """Forget the notices of memories that recovered, were kept or are gone."""
        rows = [(user_key, eid) for eid in entry_ids]
        if not rows:
            return
        with self.state.transaction() as conn:
            conn.executemany("DELETE FROM fading_notices WHERE user_key=? AND entry_id=?", rows)
