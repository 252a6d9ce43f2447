"""The ``frontdesk`` migration set: each person's language (bot/frontdesk/language_book.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.state.migrations import Migration


def _run(conn: Any, statements: Sequence[str]) -> None:
    for sql in statements:
        conn.execute(sql)


# -- 8: each person's language (bot/frontdesk/language.py) --------------------------------
# Shipped as m008 of the one list: same name, same body; its DDL is already the current shape.
_USER_LANGUAGE = (
    "CREATE TABLE IF NOT EXISTS user_language "
    "(user_key TEXT PRIMARY KEY, lang TEXT NOT NULL, chosen INTEGER NOT NULL DEFAULT 0)",
)


def m008_user_language(conn: Any) -> None:  # the language chosen (/lang, the page) or written
    """``user_language``: each person's one language."""
    _run(conn, _USER_LANGUAGE)


def frontdesk_001_adopt(conn: Any) -> None:
    """The frontdesk set takes over ``user_language`` (a no-op on every file: m008 made it)."""
    _run(conn, _USER_LANGUAGE)


FRONTDESK_SET: tuple[Migration, ...] = (
    Migration("m008_user_language", m008_user_language, "frontdesk"),
    Migration("frontdesk_001_adopt", frontdesk_001_adopt, "frontdesk"),
)
