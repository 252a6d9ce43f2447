"""OS file locks: one service per data dir, and one writer at a time for each user's files.

Two kinds of lock, both ``fcntl.flock`` on a small file that is never removed:

- the **service lock** (``<data dir>/pcai.lock``), held exclusively for a service's whole
  life, so a second ``pcai run`` on the same data dir refuses instead of racing the first;
- a **file lock** per user (``users/<key>/.lock``) or per session, held across each
  read-modify-write, so an operator command (``pcai remember``, ``reindex``) and the bot take
  turns on the same files and no update is lost.

``flock`` locks belong to an open file: two opens of one lock file in one process would block
each other. So each lock file has exactly one :class:`FileLock` per process (see
:func:`file_lock`), which composes a re-entrant thread lock (the threads of this process)
with the ``flock`` (other processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType

from memory.base.users import UserPaths
from memory.errors import DataDirBusyError

SERVICE_LOCK = "pcai.lock"
USER_LOCK = ".lock"
# How often an async waiter retries a lock held by another process (it never blocks the loop).
POLL_SECONDS = 0.02


class FileLock:
    """A lock for the threads of this process and, through ``flock``, for other processes.

    Re-entrant in the thread that holds it: a write that calls another write of the same
    user's files does not deadlock. The ``flock`` is taken on the outermost acquire and
    dropped on the outermost release.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def acquire(self, blocking: bool = True) -> bool:
        """Take the lock, waiting for other threads and processes unless ``blocking`` is off."""
        if not self._threads.acquire(blocking):
            return False
        if self._depth == 0:
            try:
                self._fd = _flock(self.path, blocking)
            except BaseException:
                self._threads.release()
                raise
            if self._fd is None:
                self._threads.release()
                return False
        self._depth += 1
        return True

    def release(self) -> None:
        """Give the lock back (the ``flock`` too, on the outermost release)."""
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor drops the flock
        self._threads.release()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold the lock in a coroutine: retried without blocking the event loop.

        Cancellation-safe: a waiter that is cancelled never ends up owning the lock.
        """
        while not self.acquire(blocking=False):
            await asyncio.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            self.release()


def _flock(path: Path, blocking: bool, writable: bool = False) -> int | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # flock needs no write access: a lock file another account created stays usable.
    mode = os.O_RDWR if writable else os.O_RDONLY
    fd = os.open(path, mode | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


_LOCKS: dict[Path, FileLock] = {}
_LOCKS_GUARD = threading.Lock()


def file_lock(path: Path) -> FileLock:
    """This process's one lock for ``path`` (a process-wide registry, because flock is)."""
    key = Path(os.path.abspath(path))
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = FileLock(key)
        return lock


def user_lock(data_dir: Path, user_key: str) -> FileLock:
    """The lock every write of ``user_key``'s files takes (``users/<key>/.lock``)."""
    return file_lock(UserPaths.of(data_dir, user_key).root / USER_LOCK)


class ServiceLock:
    """The exclusive lock a running service holds on its data dir for its whole life."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / SERVICE_LOCK
        self._fd: int | None = None

    def acquire(self) -> ServiceLock:
        """Take the lock now or raise :class:`DataDirBusyError` (never waits)."""
        fd = _flock(self.path, blocking=False, writable=True)
        if fd is None:
            holder = _read_pid(self.path)
            raise DataDirBusyError(self.path.parent, holder)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Let another service start on this data dir."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> ServiceLock:
        return self.acquire() if self._fd is None else self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def service_holds(data_dir: Path) -> bool:
    """Whether a running service holds ``data_dir`` now: a look that takes nothing and
    creates nothing (``pcai web-link`` on a new folder leaves no ``pcai.lock`` behind)."""
    try:
        fd = os.open(data_dir / SERVICE_LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:  # never served: no lock file, so nothing holds it
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # shared: never keeps a starter out long
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the probe's own lock at once
    return False


def _read_pid(path: Path) -> str:
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""
