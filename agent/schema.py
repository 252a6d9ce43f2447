"""The ``agent`` migration set: the deferred-work queue and the /why records in ``pcai.db``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.state.migrations import Migration


def _run(conn: Any, statements: Sequence[str]) -> None:
    for sql in statements:
        conn.execute(sql)


# -- 5: the queue of work a turn leaves for later (agent/deferred.py) ---------------------
# Shipped as m005 of the one list: same name, same body.
_DEFERRED_WORK = (
    """CREATE TABLE IF NOT EXISTS deferred_work (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    retry_at REAL NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT ''
)""",
    "CREATE INDEX IF NOT EXISTS deferred_work_by_user ON deferred_work (user_key, seq)",
)


def m005_deferred_work(conn: Any) -> None:
    """``deferred_work``: indexing, compaction and topic turns waiting for the worker."""
    _run(conn, _DEFERRED_WORK)


# -- adoption: agent/why.py's tables, made by m001 and m004, in their current shape ----------
_WHY = (
    """CREATE TABLE IF NOT EXISTS last_injection (
    user_key TEXT PRIMARY KEY,
    injected TEXT NOT NULL,
    at TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS injection_history (
    id INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL,
    injected TEXT NOT NULL,
    at TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS injection_history_by_user ON injection_history (user_key, id)",
)


def agent_001_adopt(conn: Any) -> None:
    """The agent set takes over its tables (a no-op on every file: m001, m004, m005 made them)."""
    _run(conn, (*_DEFERRED_WORK, *_WHY))


AGENT_SET: tuple[Migration, ...] = (
    Migration("m005_deferred_work", m005_deferred_work, "agent"),
    Migration("agent_001_adopt", agent_001_adopt, "agent"),
)
