"""Notices owed to a user outside a reply: a file problem told once, and a small outbox.

A problem with one of a user's files (``MEMORY.md`` is not UTF-8, ...) is told to its owner
once per state of that file: the (user, file) pair remembers the file's stamp (mtime and
size) when it was told, so every later job tick and turn stays quiet until the file changes.
The outbox holds notices decided away from a chat (a proposal expired, ``pcai.db`` was
rebuilt at start); the next job tick that can reach users delivers them. Both live in
``pcai.db``, so a restart drops neither: a notice queued in the same transaction as the change
it announces is delivered even if the process dies right after that change. The tables are
this module's: the ``notices`` migration set below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from memory.base.users import check_user_key
from memory.state.migrations import Migration
from memory.state.statedb import StateDB

# -- the notices set: the tables m001 made, in their current shape ----------------------------
_NOTICE_TABLES = (
    """CREATE TABLE IF NOT EXISTS told_problems (
    user_key TEXT NOT NULL,
    topic TEXT NOT NULL,
    stamp TEXT NOT NULL,
    told_ts REAL NOT NULL,
    PRIMARY KEY (user_key, topic)
)""",
    """CREATE TABLE IF NOT EXISTS notice_batches (
    key TEXT PRIMARY KEY,
    queued_ts REAL NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS notice_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_key TEXT NOT NULL,
    text TEXT NOT NULL,
    created_ts REAL NOT NULL
)""",
)


def notices_001_adopt(conn: Any) -> None:
    """The notices set takes over its tables (a no-op on every file: m001 made them)."""
    for sql in _NOTICE_TABLES:
        conn.execute(sql)


NOTICES_SET: tuple[Migration, ...] = (
    Migration("notices_001_adopt", notices_001_adopt, "notices"),
)

# A notice nobody could deliver for this long (the user blocked the bot) is dropped.
OUTBOX_MAX_AGE = timedelta(days=2)


@dataclass(frozen=True, slots=True)
class QueuedNotice:
    """One notice waiting in the outbox."""

    id: int
    user_key: str
    text: str


class NoticeBook:
    """What each user has been told about their files, and what is still to tell."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def claim(self, user_key: str, topic: str, stamp: str, now: datetime) -> bool:
        """True (and recorded) when ``topic`` at ``stamp`` was not told to ``user_key`` yet.

        Claim first, then tell: two tellers racing (a job and a turn) tell once. A telling
        that fails gives the claim back with :meth:`release`.
        """
        check_user_key(user_key)
        with self.state.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO told_problems (user_key, topic, stamp, told_ts) VALUES (?,?,?,?) "
                "ON CONFLICT (user_key, topic) DO UPDATE SET stamp=excluded.stamp, "
                "told_ts=excluded.told_ts WHERE told_problems.stamp != excluded.stamp",
                (user_key, topic, stamp, now.timestamp()),
            )
            return bool(cur.rowcount)

    def release(self, user_key: str, topic: str) -> None:
        """Forget that ``topic`` was told: the next chance tells it again."""
        with self.state.transaction() as conn:
            conn.execute(
                "DELETE FROM told_problems WHERE user_key=? AND topic=?", (user_key, topic)
            )

    def queue(self, user_key: str, text: str, now: datetime, conn: Any = None) -> None:
        """Put a notice in the outbox for the next job tick that can reach users.

        With ``conn`` (a transaction of the same ``pcai.db`` the caller holds), the notice
        commits or rolls back with the caller's change.
        """
        check_user_key(user_key)
        row = (user_key, text, now.timestamp())
        sql = "INSERT INTO notice_outbox (user_key, text, created_ts) VALUES (?,?,?)"
        if conn is not None:
            conn.execute(sql, row)
            return
        with self.state.transaction() as own:
            own.execute(sql, row)

    def batch_queued(self, key: str) -> bool:
        """Whether the batch ``key`` was queued already (by this or an earlier process)."""
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT 1 FROM notice_batches WHERE key=?", (key,)
            ).fetchone()
        return row is not None

    def queue_batch(self, key: str, notices: Sequence[tuple[str, str]], now: datetime) -> bool:
        """Queue ``(user_key, text)`` notices once per ``key``, all or none; False if done."""
        with self.state.transaction() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO notice_batches (key, queued_ts) VALUES (?,?)",
                (key, now.timestamp()),
            )
            if not cur.rowcount:
                return False
            for user_key, text in notices:
                self.queue(user_key, text, now, conn)
        return True

    def outbox(self, now: datetime, user_key: str | None = None) -> list[QueuedNotice]:
        """Every notice still to deliver (``user_key``'s only if given), oldest first.

        Undeliverable old ones are dropped.
        """
        mine, args = ("", ()) if user_key is None else (" WHERE user_key=?", (user_key,))
        with self.state.transaction() as conn:
            conn.execute(
                "DELETE FROM notice_outbox WHERE created_ts<?",
                ((now - OUTBOX_MAX_AGE).timestamp(),),
            )
            rows = conn.execute(
                f"SELECT id, user_key, text FROM notice_outbox{mine} ORDER BY id", args
            ).fetchall()
        return [QueuedNotice(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def delivered(self, notice_id: int) -> None:
        """Drop a notice from the outbox once it was handed to the user's chat."""
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM notice_outbox WHERE id=?", (notice_id,))
