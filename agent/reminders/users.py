"""Per-user reminder settings in ``pcai.db``: the time zone and the morning briefing time.

The table is created by :mod:`memory.state.migrations`, like every table of ``pcai.db``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.base.users import check_user_key
from memory.state.statedb import StateDB


@dataclass(frozen=True, slots=True)
class UserSettings:
    """A user's zone (``""``: the default) and briefing time (``""``: off)."""

    user_key: str
    zone: str = ""
    briefing_at: str = ""  # "HH:MM" in the user's zone
    briefing_last: str = ""  # the local date (YYYY-MM-DD) of the last briefing claimed


def _settings(r: Any) -> UserSettings:
    return UserSettings(r["user_key"], r["zone"], r["briefing_at"], r["briefing_last"])


class ReminderUsers:
    """Reads and writes ``reminder_users`` rows (the table must exist)."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def settings(self, user_key: str) -> UserSettings:
        """A user's settings (defaults when the user never set any)."""
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT * FROM reminder_users WHERE user_key=?", (check_user_key(user_key),)
            ).fetchone()
        return _settings(row) if row else UserSettings(user_key)

    def _upsert(self, user_key: str, column: str, value: str) -> UserSettings:
        with self.state.transaction() as conn:
            conn.execute(
                f"INSERT INTO reminder_users (user_key, {column}) VALUES (?, ?) "
                f"ON CONFLICT(user_key) DO UPDATE SET {column}=excluded.{column}",
                (check_user_key(user_key), value),
            )
        return self.settings(user_key)

    def set_zone(self, user_key: str, zone: str) -> UserSettings:
        """Store the user's zone name."""
        return self._upsert(user_key, "zone", zone)

    def set_briefing(self, user_key: str, at: str) -> UserSettings:
        """Store the briefing time ``HH:MM`` (``""`` turns it off)."""
        return self._upsert(user_key, "briefing_at", at)

    def with_briefing(self) -> list[UserSettings]:
        """Every user with a briefing time."""
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT * FROM reminder_users WHERE briefing_at!='' ORDER BY user_key"
            ).fetchall()
        return [_settings(r) for r in rows]

    def claim_briefing(self, user_key: str, local_date: str) -> bool:
        """Record ``local_date``'s briefing as sent; False if it already was (one a day)."""
        with self.state.transaction() as conn:
            cur = conn.execute(
                "UPDATE reminder_users SET briefing_last=? "
                "WHERE user_key=? AND briefing_at!='' AND briefing_last<?",
                (local_date, check_user_key(user_key), local_date),
            )
            return bool(cur.rowcount)
