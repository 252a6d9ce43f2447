"""Short-term keyword memory: the ``short_term_memory`` table in ``pcai.db``.

Rows are short, dated notes filed under a category (weather, calendar, mail, ...): every
private message that names a category's keyword is kept here (masked, with its time) by the
agent after it answered, and a morning briefing may add its own. When a later message names a
category's keyword (天氣, 行事曆, 信件, weather, calendar/schedule, mail/email), the latest three
rows of that category, of that user only, go into the prompt without a vector search. Only the
newest ``KEEP_PER_CATEGORY`` rows of a user's category are kept: the table is short-term.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from memory.base.guards import mask
from memory.state.statedb import StateDB

# Category -> keywords that name it (Traditional and Simplified Chinese, English).
KEYWORDS: dict[str, tuple[str, ...]] = {
    "weather": ("天氣", "天气", "氣溫", "气温", "下雨", "weather", "forecast", "temperature"),
    "calendar": (
        "行事曆",
        "行事历",
        "日曆",
        "日历",
        "行程",
        "calendar",
        "schedule",
        "agenda",
        "appointment",
    ),
    "mail": ("信件", "郵件", "邮件", "電郵", "电邮", "mail", "email", "e-mail", "inbox"),
}
_ASCII_WORD = re.compile(r"^[a-z-]+$")
KEEP_PER_CATEGORY = 50


@dataclass(frozen=True, slots=True)
class ShortTermRow:
    """One short-term note."""

    user_key: str
    category: str
    content: str
    created_at: str


def categories_in(text: str) -> list[str]:
    """The categories whose keywords ``text`` names, in KEYWORDS order."""
    low = text.lower()
    found = []
    for category, words in KEYWORDS.items():
        for word in words:
            # English keywords must be whole words ("mail" in "email" is fine, "snail" is not).
            hit = (
                re.search(rf"(?<![a-z]){re.escape(word)}s?(?![a-z])", low)
                if _ASCII_WORD.match(word)
                else word in text
            )
            if hit:
                found.append(category)
                break
    return found


class ShortTermStore:
    """Reads and writes ``short_term_memory`` rows, always scoped to one user."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def add(self, user_key: str, category: str, content: str, now: datetime) -> ShortTermRow:
        """Store one note under ``category`` (a KEYWORDS key or any other name)."""
        content = mask(content.strip())  # secrets never reach pcai.db
        if not content:
            raise ValueError("a short-term note needs some text")
        row = ShortTermRow(user_key, category.strip().lower(), content, now.isoformat())
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO short_term_memory (user_key, category, content, created_at) "
                "VALUES (?, ?, ?, ?)",
                (row.user_key, row.category, row.content, row.created_at),
            )
            conn.execute(
                "DELETE FROM short_term_memory WHERE user_key = ? AND category = ? AND id NOT IN "
                "(SELECT id FROM short_term_memory WHERE user_key = ? AND category = ? "
                "ORDER BY created_at DESC, id DESC LIMIT ?)",
                (row.user_key, row.category, row.user_key, row.category, KEEP_PER_CATEGORY),
            )
        return row

    def latest(self, user_key: str, category: str, limit: int = 3) -> list[ShortTermRow]:
        """The newest ``limit`` rows of one category of one user, newest first."""
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT user_key, category, content, created_at FROM short_term_memory "
                "WHERE user_key = ? AND category = ? ORDER BY created_at DESC, id DESC LIMIT ?",
                (user_key, category, limit),
            ).fetchall()
        return [ShortTermRow(r[0], r[1], r[2], r[3]) for r in rows]

    def for_message(self, user_key: str, text: str, limit: int = 3) -> list[ShortTermRow]:
        """The latest ``limit`` rows of each category the message names."""
        out: list[ShortTermRow] = []
        for category in categories_in(text):
            out.extend(self.latest(user_key, category, limit))
        return out

    def redact(
        self,
        user_key: str,
        redact: Callable[[str], str],
        note: Callable[[str, str, str], None] | None = None,
    ) -> int:
        """Pass each of the user's rows through ``redact`` (forget); returns rows changed.

        ``note(row id, before, after)`` hears of each change, so :meth:`put_back` can undo it.
        """
        changed = 0
        with self.state.transaction() as conn:
            rows = conn.execute(
                "SELECT id, content FROM short_term_memory WHERE user_key = ?", (user_key,)
            ).fetchall()
            for row_id, content in rows:
                new = redact(content)
                if new != content:
                    conn.execute(
                        "UPDATE short_term_memory SET content = ? WHERE id = ?", (new, row_id)
                    )
                    changed += 1
                    if note is not None:
                        note(str(row_id), content, new)
        return changed

    def put_back(self, user_key: str, changes: Mapping[str, tuple[str, str]]) -> None:
        """Undo :meth:`redact`: each row still as it left it gets its old content back."""
        with self.state.transaction() as conn:
            for row_id, (before, after) in changes.items():
                conn.execute(
                    "UPDATE short_term_memory SET content = ? "
                    "WHERE id = ? AND user_key = ? AND content = ?",
                    (before, row_id, user_key, after),
                )
