"""SQLite connections with sqlite-vec loaded.

This machine's stdlib ``sqlite3`` is built without ``enable_load_extension``, so the DB-API
compatible ``pysqlite3`` (from ``pysqlite3-binary``) is preferred; the stdlib module is used
only when it can load extensions. Either way callers get a ``sqlite3.Connection``-like object.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from memory.errors import StorageUnavailableError


def _driver() -> ModuleType:
    try:
        from pysqlite3 import dbapi2

        driver: ModuleType = dbapi2  # pysqlite3 ships no types
        return driver
    except ImportError:
        pass
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    raise StorageUnavailableError(
        "this Python's sqlite3 cannot load extensions and pysqlite3 is missing: "
        "install the project (pip install -e .) to get pysqlite3-binary"
    )


def connect(path: Path | str, *, vec: bool = True) -> Any:
    """Open ``path`` in WAL mode, with sqlite-vec loaded when ``vec`` is true."""
    driver = _driver()
    if isinstance(path, Path):
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = driver.connect(str(path), check_same_thread=False, timeout=30.0)
    conn.row_factory = driver.Row
    if vec:
        try:
            import sqlite_vec

            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.enable_load_extension(False)
        except Exception as exc:  # any failure here means the same thing to the operator
            conn.close()
            raise StorageUnavailableError(f"cannot load sqlite-vec: {exc}") from exc
    try:
        _set_journal_mode(conn)  # the first read: a garbage file fails here
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        # Deleted rows are zeroed, not left in free pages: a forgotten memory must not stay
        # readable in the file (docs/memory-lifecycle.md, "Forget").
        conn.execute("PRAGMA secure_delete=ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _set_journal_mode(conn: Any, *, patience: float = 30.0) -> None:
    """Switch ``conn`` to WAL, waiting out another process that is doing the same.

    When two processes open a new file at once, the switch can answer "database is locked"
    at once: SQLite does not call the busy handler while the file changes journal mode or
    while another connection recovers the WAL index. Waiting a little and asking again is
    what the busy handler would have done.
    """
    deadline = time.monotonic() + patience
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except Exception as exc:
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _is_busy(exc: BaseException) -> bool:
    message = str(exc).lower()
    return type(exc).__name__ == "OperationalError" and ("locked" in message or "busy" in message)


def connect_plain(path: Path) -> Any:
    """A connection with no pragmas at all: for reading what a damaged file still holds."""
    return _driver().connect(str(path), check_same_thread=False)


def is_damaged(exc: BaseException) -> bool:
    """True when ``exc`` says the file is not a usable database (not merely busy or locked).

    Exactly ``DatabaseError`` is damage ("file is not a database", "malformed"); its
    subclasses (``OperationalError``: locked, busy, full disk) must never cost the file.
    Matched by name because the driver may be ``pysqlite3`` or ``sqlite3``.
    """
    return type(exc).__name__ == "DatabaseError"


def set_aside(path: Path) -> Path:
    """Rename a damaged database (and its -wal/-shm) to ``<name>.corrupt-<time>``; kept, not lost.

    Returns the new name of the main file.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 1
    while any(
        path.with_name(f"{path.name}{suffix}.corrupt-{stamp}").exists()
        for suffix in ("", "-wal", "-shm")
    ):
        n += 1  # a second set-aside within one second must not replace the first
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{n}"
    for suffix in ("-wal", "-shm", ""):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(part.with_name(f"{part.name}.corrupt-{stamp}"))
    return path.with_name(f"{path.name}.corrupt-{stamp}")


def versions(conn: Any) -> tuple[str, str]:
    """Return (sqlite version, sqlite-vec version) of an open connection."""
    row = conn.execute("SELECT sqlite_version(), vec_version()").fetchone()
    return str(row[0]), str(row[1])
