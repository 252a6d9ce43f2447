"""``pcai.db``: operational state (pending memories, access counters, short-term table).

One connection per process, WAL mode. The schema is named migration sets
(:mod:`memory.state.migrations`; alone, the memory set; the bot gives every set, bot/schema.py):
opening the file applies the migrations it lacks (a file from before migrations is adopted with
its rows), and a file from a newer PCAI is refused unchanged
(:class:`~memory.errors.StateTooNewError`).

A damaged file (garbage, truncated, malformed) must not keep the bot from starting: it is
set aside as ``pcai.db.corrupt-<time>`` and an empty one takes its place. The copy stays on
disk (``pcai doctor`` names it) and :func:`salvage_pending` reads back whose pending proposals
were lost, so those users can be told (``bot.recovery`` does, once per copy).
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.base.db import connect, connect_plain, is_damaged, set_aside
from memory.errors import StateDamagedError
from memory.state.migrations import MEMORY_SET, Migration, migrate

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LostProposal:
    """A proposal that was waiting in a damaged ``pcai.db``."""

    user_key: str
    text: str


def _open_checked(path: Path) -> Any:
    conn = connect(path, vec=False)
    try:
        # A truncated file opens fine and fails later, mid-turn; quick_check finds it now.
        verdict = str(conn.execute("PRAGMA quick_check(1)").fetchone()[0])
    except BaseException:
        conn.close()
        raise
    if verdict != "ok":
        conn.close()
        raise StateDamagedError(verdict)
    return conn


_HEADER = b"SQLite format 3\x00"


def _readable_copy(aside: Path, copy: Path) -> None:
    """Copy ``aside`` so that SQLite reads what is left of a truncated file.

    The header's page count (bytes 28-31) still names the pages a truncation cut off, and
    SQLite then refuses even the schema; the copy states the pages the file really has.
    """
    raw = bytearray(aside.read_bytes())
    if len(raw) >= 100 and raw.startswith(_HEADER):
        size = int.from_bytes(raw[16:18], "big")
        page = 65536 if size == 1 else size
        if page >= 512:
            raw[28:32] = (len(raw) // page).to_bytes(4, "big")
    copy.write_bytes(bytes(raw))


def salvage_pending(aside: Path) -> tuple[LostProposal, ...] | None:
    """The pending proposals the damaged copy still yields; None when it yields nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "salvage.db"
        conn = None
        try:
            _readable_copy(aside, copy)  # never write to the kept copy, not even a -shm
            conn = connect_plain(copy)  # journal_mode=WAL would fail on a damaged header
            # A truncation also cuts the root pages of later tables; writable_schema makes
            # SQLite skip those schema rows instead of refusing the whole file.
            conn.execute("PRAGMA writable_schema=ON")
            rows = conn.execute(
                "SELECT user_key, text FROM pending_memories NOT INDEXED "
                "WHERE status='pending' ORDER BY created_at"
            ).fetchall()
            return tuple(LostProposal(str(r[0]), str(r[1])) for r in rows)
        except Exception:  # garbage, or the table's pages are gone: the loss is unknowable
            return None
        finally:
            if conn is not None:
                conn.close()


class StateDB:
    """A shared connection to ``pcai.db`` with a lock and a transaction helper."""

    def __init__(self, path: Path, migrations: Sequence[Migration] = MEMORY_SET) -> None:
        self.path = path
        try:
            self.conn: Any = _open_checked(path)
        except Exception as exc:
            if not (is_damaged(exc) or isinstance(exc, StateDamagedError)):
                raise  # locked, busy, no permission: not damage, the file stays
            aside = set_aside(path)
            log.warning(
                "%s is damaged (%s): set aside as %s and started empty; the pending "
                "proposals, /why records, access counters and short-term notes it held are lost",
                path,
                exc,
                aside.name,
            )
            self.conn = connect(path, vec=False)
        self.lock = threading.RLock()
        try:
            self.migrated = migrate(self.conn, path, migrations)
        except BaseException:
            self.conn.close()  # a newer file is refused as it is, and nothing holds it open
            raise

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


def set_aside_copies(path: Path) -> list[Path]:
    """The damaged copies of ``path`` set aside so far, oldest first (for ``pcai doctor``)."""
    return sorted(path.parent.glob(f"{path.name}.corrupt-*"))  # -wal/-shm copies differ
