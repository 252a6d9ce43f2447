"""``pcai.db``: operational state (pending memories, access counters, short-term table).

One connection per process, WAL mode. Each feature module owns its tables and creates them
with ``CREATE TABLE IF NOT EXISTS`` through :meth:`StateDB.ensure`, so features stay
independent and a fresh file needs no migration step.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory.db import connect


class StateDB:
    """A shared connection to ``pcai.db`` with a lock and a transaction helper."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn: Any = connect(path, vec=False)
        self.lock = threading.RLock()
        self._ensured: set[str] = set()

    def ensure(self, name: str, ddl: str) -> None:
        """Run ``ddl`` (idempotent CREATE ... IF NOT EXISTS statements) once per process."""
        with self.lock:
            if name in self._ensured:
                return
            self.conn.executescript(ddl)
            self.conn.commit()
            self._ensured.add(name)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """Hold the lock and commit on success, roll back on error."""
        with self.lock:
            try:
                yield self.conn
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()
