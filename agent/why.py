"""What shaped each user's replies (``/why``, the memory page), kept in ``pcai.db``.

``last_injection`` holds the latest prompt's memories (what /why explains); ``injection_history``
keeps the memories of the user's last :data:`KEEP` replies that used any, for the page. Forget
redacts both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, replace
from datetime import datetime

from agent.types import InjectedMemory
from memory.state.statedb import StateDB

KEEP = 20  # replies whose memories the page shows
_TABLES = (("last_injection", "user_key"), ("injection_history", "id"))  # (table, row key)
Note = Callable[[str, str, str], None]  # (row key, before, after): what forget changed


def _loads(body: str) -> tuple[InjectedMemory, ...]:
    return tuple(InjectedMemory(**item) for item in json.loads(body))


def _dumps(injected: Sequence[InjectedMemory]) -> str:
    return json.dumps([asdict(m) for m in injected], ensure_ascii=False)


class WhyLog:
    """The memories injected into each user's last prompt (ids, layers, scores, text)."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def record(self, user_key: str, injected: Sequence[InjectedMemory], now: datetime) -> None:
        """Replace the user's record with what the latest prompt held (empty: nothing).

        A prompt that held memories is also added to the user's history (the last ``KEEP``).
        """
        body = _dumps(injected)
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO last_injection (user_key, injected, at) VALUES (?, ?, ?)",
                (user_key, body, now.isoformat()),
            )
            if injected:
                conn.execute(
                    "INSERT INTO injection_history (user_key, injected, at) VALUES (?, ?, ?)",
                    (user_key, body, now.isoformat()),
                )
                conn.execute(
                    "DELETE FROM injection_history WHERE user_key = ? AND id NOT IN "
                    "(SELECT id FROM injection_history WHERE user_key = ? "
                    "ORDER BY id DESC LIMIT ?)",
                    (user_key, user_key, KEEP),
                )

    def recent(self, user_key: str) -> list[tuple[str, tuple[InjectedMemory, ...]]]:
        """(time, memories) of the user's last replies that used memories, newest first."""
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT at, injected FROM injection_history WHERE user_key = ? ORDER BY id DESC",
                (user_key,),
            ).fetchall()
        return [(str(r[0]), _loads(r[1])) for r in rows]

    def last(self, user_key: str) -> tuple[InjectedMemory, ...]:
        """What the user's last prompt held; empty when nothing was recorded."""
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT injected FROM last_injection WHERE user_key = ?", (user_key,)
            ).fetchone()
        if row is None:
            return ()
        return _loads(row[0])

    def clear(self, user_key: str) -> None:
        """Forget the record (a new conversation starts with nothing to explain)."""
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM last_injection WHERE user_key = ?", (user_key,))

    def redact(
        self,
        user_key: str,
        redact: Callable[[str], str],
        ids: Collection[str],
        blank: str,
        note: Note | None = None,
    ) -> None:
        """Redact the records (forget): the memories ``ids`` become ``blank``, the rest pass
        through ``redact``. ``note(key, before, after)`` hears of each row changed (undo)."""

        def clean(body: str) -> str:
            old = _loads(body)
            new = tuple(replace(m, text=blank if m.id in ids else redact(m.text)) for m in old)
            return body if new == old else _dumps(new)

        with self.state.transaction() as conn:
            for table, key in _TABLES:
                rows = conn.execute(
                    f"SELECT {key}, injected FROM {table} WHERE user_key = ?", (user_key,)
                ).fetchall()
                for ident, body in rows:
                    new = clean(body)
                    if new != body:
                        conn.execute(
                            f"UPDATE {table} SET injected = ? WHERE {key} = ?", (new, ident)
                        )
                        if note is not None:
                            note(f"{table}:{ident}", body, new)

    def put_back(self, user_key: str, changes: Mapping[str, tuple[str, str]]) -> None:
        """Undo :meth:`redact`: each row still as it left it gets its old record back."""
        with self.state.transaction() as conn:
            for name, (before, after) in changes.items():
                table, _, ident = name.partition(":")
                for known, key in _TABLES:
                    if table == known:
                        conn.execute(
                            f"UPDATE {table} SET injected = ? WHERE user_key = ? AND {key} = ? "
                            "AND injected = ?",
                            (before, user_key, ident, after),
                        )
