"""The ``reminders`` migration set: the tables of the reminder store, as DDL text only."""

from __future__ import annotations

from typing import Any

from memory.state.migrations import Migration


# -- 9: what a reminder's time is anchored to (agent/reminders' store) ----------------------
# Shipped as m009 of the one list: same name, same body.
def m009_reminder_anchor(conn: Any) -> None:
    """``reminders.anchor``: a clock time (``wall``: "at 9:00") or a moment (``instant``: "in
    30 minutes"), so ``/tz`` moves only the first; older rows were all clock times."""
    conn.execute("ALTER TABLE reminders ADD COLUMN anchor TEXT NOT NULL DEFAULT 'wall'")


# -- adoption: the tables m001 made (and m009 widened), in their current shape ---------------
_REMINDERS = (
    """CREATE TABLE IF NOT EXISTS reminders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_key TEXT NOT NULL,
    text TEXT NOT NULL,
    due_utc TEXT NOT NULL,
    due_ts REAL NOT NULL,
    zone TEXT NOT NULL,
    recurrence TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    confirmed_at TEXT NOT NULL DEFAULT '',
    fired_at TEXT NOT NULL DEFAULT '',
    occurrence_utc TEXT NOT NULL DEFAULT '',
    sent_at TEXT NOT NULL DEFAULT '',
    snoozed_at TEXT NOT NULL DEFAULT '',
    snooze_count INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_outcome TEXT NOT NULL DEFAULT '',
    message_id TEXT NOT NULL DEFAULT '',
    anchor TEXT NOT NULL DEFAULT 'wall'
)""",
    "CREATE INDEX IF NOT EXISTS reminders_by_user ON reminders (user_key, status, due_ts)",
    "CREATE INDEX IF NOT EXISTS reminders_by_status ON reminders (status, due_ts)",
    """CREATE TABLE IF NOT EXISTS reminder_users (
    user_key TEXT PRIMARY KEY,
    zone TEXT NOT NULL DEFAULT '',
    briefing_at TEXT NOT NULL DEFAULT '',
    briefing_last TEXT NOT NULL DEFAULT ''
)""",
)


def reminders_001_adopt(conn: Any) -> None:
    """The reminders set takes over its tables (a no-op on every file: m001 and m009 made them)."""
    for sql in _REMINDERS:
        conn.execute(sql)


def reminders_002_numbers(conn: Any) -> None:
    """``reminders.number``: each person's own numbering (their first reminder is #1), the
    number they are shown and type; the row id stays inside. Older rows are numbered in the
    order they were made, per person."""
    conn.execute("ALTER TABLE reminders ADD COLUMN number INTEGER NOT NULL DEFAULT 0")
    conn.execute(
        "UPDATE reminders SET number = (SELECT COUNT(*) FROM reminders AS r "
        "WHERE r.user_key = reminders.user_key AND r.id <= reminders.id)"
    )
    conn.execute("CREATE UNIQUE INDEX reminders_by_number ON reminders (user_key, number)")


REMINDERS_SET: tuple[Migration, ...] = (
    Migration("m009_reminder_anchor", m009_reminder_anchor, "reminders"),
    Migration("reminders_001_adopt", reminders_001_adopt, "reminders"),
    Migration("reminders_002_numbers", reminders_002_numbers, "reminders"),
)
