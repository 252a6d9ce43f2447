"""Each person's language in ``pcai.db``: the one they chose, or the one they last wrote in.

The table is created by :mod:`memory.state.migrations`, like every table of ``pcai.db``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.base.users import check_user_key
from memory.state.statedb import StateDB


@dataclass(frozen=True, slots=True)
class UserLanguage:
    """A person's language code and whether they chose it (``/lang``, the page's switch)."""

    lang: str
    chosen: bool


class LanguageBook:
    """Reads and writes ``user_language`` rows."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def get(self, user_key: str) -> UserLanguage | None:
        """The stored language, or None when nothing is known yet."""
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT lang, chosen FROM user_language WHERE user_key=?",
                (check_user_key(user_key),),
            ).fetchone()
        return UserLanguage(str(row[0]), bool(row[1])) if row else None

    def put(self, user_key: str, lang: str, *, chosen: bool) -> None:
        """Store ``lang``; a guess (``chosen=False``) never replaces a choice."""
        guard = "" if chosen else " WHERE user_language.chosen = 0"
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO user_language (user_key, lang, chosen) VALUES (?, ?, ?) "
                "ON CONFLICT(user_key) DO UPDATE SET lang=excluded.lang, "
                f"chosen=excluded.chosen{guard}",
                (check_user_key(user_key), lang, int(chosen)),
            )
