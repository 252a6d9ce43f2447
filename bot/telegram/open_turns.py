"""Messages received and not yet answered (``open_turns`` in ``pcai.db``): no turn is lost.

The table is this module's: its migrations (the ``telegram`` set) are below.

Telegram forgets an update once the next ``getUpdates`` confirms it, which python-telegram-bot
does as soon as it has fetched it, long before the answer is sent. So the bot writes each
message here as it arrives and deletes the row once the message was handled (answered, or
told why not). A process that dies in between (kill -9 during the model call) leaves the row;
the next process answers it, or, when it is too old to answer now, says so in one sentence.

The stored update is the bot layer's JSON with secrets already masked (the caller's duty):
a secret in a message is never written anywhere, this table included.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from telegram import Bot, Update

from memory.base.users import check_user_key
from memory.state.migrations import Migration

if TYPE_CHECKING:
    from memory.state.statedb import StateDB

OPEN_TURNS_DDL = (
    """CREATE TABLE IF NOT EXISTS open_turns (
    update_id INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL,
    chat_id INTEGER NOT NULL,
    sent_ts REAL NOT NULL,
    payload TEXT NOT NULL
)""",
)


def m006_open_turns(conn: Any) -> None:
    """``open_turns``: messages received and not yet answered (bot/telegram/queues.py)."""
    for statement in OPEN_TURNS_DDL:
        conn.execute(statement)


def telegram_001_adopt(conn: Any) -> None:
    """The ``telegram`` set takes ``open_turns`` over from the one list (a no-op: m006 made it)."""
    for statement in OPEN_TURNS_DDL:
        conn.execute(statement)


# The telegram set: m006 shipped in the one list (same name, same body); later changes to
# open_turns go here only.
TELEGRAM_SET = (
    Migration("m006_open_turns", m006_open_turns, "telegram"),
    Migration("telegram_001_adopt", telegram_001_adopt, "telegram"),
)


@dataclass(frozen=True, slots=True)
class OpenTurn:
    """A message a previous process received and never finished."""

    update_id: int
    user_key: str
    chat_id: int
    sent_ts: float  # when the user sent it (epoch seconds)
    payload: dict[str, Any]

    def update(self, bot: Bot | None) -> Update:
        """The stored message as the Telegram update it was (secrets masked)."""
        return Update.de_json(self.payload, bot)


class OpenTurns:
    """Write a message as it arrives, delete it once handled, list what a crash left."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def opened(
        self,
        update_id: int,
        user_key: str,
        chat_id: int,
        sent_ts: float,
        payload: Mapping[str, Any],
    ) -> None:
        """Record a message that is about to be handled (again, if it is a replay)."""
        check_user_key(user_key)
        raw = json.dumps(dict(payload), ensure_ascii=False)
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO open_turns "
                "(update_id, user_key, chat_id, sent_ts, payload) VALUES (?, ?, ?, ?, ?)",
                (update_id, user_key, chat_id, sent_ts, raw),
            )

    def closed(self, update_ids: Iterable[int]) -> None:
        """The messages were handled: forget them."""
        with self.state.transaction() as conn:
            conn.executemany(
                "DELETE FROM open_turns WHERE update_id = ?", [(int(u),) for u in update_ids]
            )

    def left(self) -> list[OpenTurn]:
        """What is still open, oldest first (at start: what the last process never finished)."""
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT update_id, user_key, chat_id, sent_ts, payload FROM open_turns "
                "ORDER BY update_id"
            ).fetchall()
        out = []
        for update_id, user_key, chat_id, sent_ts, payload in rows:
            try:
                data = json.loads(payload)
            except ValueError:
                data = {}
            out.append(
                OpenTurn(
                    int(update_id),
                    str(user_key),
                    int(chat_id),
                    float(sent_ts),
                    data if isinstance(data, dict) else {},
                )
            )
        return out
