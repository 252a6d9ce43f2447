"""The ``web`` migration set: the memory page's login links, sessions and spent Mini App logins."""

from __future__ import annotations

from typing import Any

from memory.state.migrations import Migration


# Shipped as m007 of the one list: same name, same body.
def m007_initdata_spent(conn: Any) -> None:
    """``web_initdata_spent``: a Mini App initData logs in once (bot/web/logins.py)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS web_initdata_spent (hash TEXT PRIMARY KEY, expires_ts REAL)"
    )


# -- adoption: the tables m004 and m007 made, in their current shape --------------------------
# Links and session ids are stored as their SHA-256 only (bot/web/logins.py).
_WEB = (
    """CREATE TABLE IF NOT EXISTS web_login_links (
    token_hash TEXT PRIMARY KEY,
    user_key TEXT NOT NULL,
    lang TEXT NOT NULL DEFAULT '',
    created_ts REAL NOT NULL,
    expires_ts REAL NOT NULL,
    used_ts REAL
)""",
    """CREATE TABLE IF NOT EXISTS web_sessions (
    id_hash TEXT PRIMARY KEY,
    user_key TEXT NOT NULL,
    lang TEXT NOT NULL DEFAULT '',
    created_ts REAL NOT NULL,
    expires_ts REAL NOT NULL
)""",
    "CREATE TABLE IF NOT EXISTS web_initdata_spent (hash TEXT PRIMARY KEY, expires_ts REAL)",
)


def web_001_adopt(conn: Any) -> None:
    """The web set takes over its tables (a no-op on every file: m004 and m007 made them)."""
    for sql in _WEB:
        conn.execute(sql)


WEB_SET: tuple[Migration, ...] = (
    Migration("m007_initdata_spent", m007_initdata_spent, "web"),
    Migration("web_001_adopt", web_001_adopt, "web"),
)
