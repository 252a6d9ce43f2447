"""What shaped each user's last reply (``/why``), kept in ``pcai.db`` across restarts."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, replace
from datetime import datetime

from agent.types import InjectedMemory
from memory.state import StateDB


class WhyLog:
    """The memories injected into each user's last prompt (ids, layers, scores, text)."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def record(self, user_key: str, injected: Sequence[InjectedMemory], now: datetime) -> None:
        """Replace the user's record with what the latest prompt held (empty: nothing)."""
        body = json.dumps([asdict(m) for m in injected], ensure_ascii=False)
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO last_injection (user_key, injected, at) VALUES (?, ?, ?)",
                (user_key, body, now.isoformat()),
            )

    def last(self, user_key: str) -> tuple[InjectedMemory, ...]:
        """What the user's last prompt held; empty when nothing was recorded."""
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT injected FROM last_injection WHERE user_key = ?", (user_key,)
            ).fetchone()
        if row is None:
            return ()
        return tuple(InjectedMemory(**item) for item in json.loads(row[0]))

    def clear(self, user_key: str) -> None:
        """Forget the record (a new conversation starts with nothing to explain)."""
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM last_injection WHERE user_key = ?", (user_key,))

    def redact(
        self, user_key: str, redact: Callable[[str], str], ids: Collection[str], blank: str
    ) -> None:
        """Redact the record (forget): the memories ``ids`` become ``blank``, the rest pass
        through ``redact``."""
        last = self.last(user_key)
        new = tuple(replace(m, text=blank if m.id in ids else redact(m.text)) for m in last)
        if new != last:
            with self.state.transaction() as conn:
                conn.execute(
                    "UPDATE last_injection SET injected = ? WHERE user_key = ?",
                    (json.dumps([asdict(m) for m in new], ensure_ascii=False), user_key),
                )
