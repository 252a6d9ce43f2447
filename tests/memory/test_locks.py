"""File locks: re-entrant for this process's threads, exclusive against other processes."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.base.locks import DataDirBusyError, ServiceLock, file_lock, user_lock


@contextlib.contextmanager
def held_elsewhere(path: Path) -> Iterator[None]:
    """The lock file flocked through a second open file, as another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)


def taken_elsewhere(path: Path) -> bool:
    """Whether another open file of ``path`` would have to wait for the flock."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_the_flock_is_held_until_the_outermost_release(tmp_path: Path) -> None:
    lock = user_lock(tmp_path, "cli_ann")
    assert lock is user_lock(tmp_path, "cli_ann")  # one per lock file in a process
    assert lock.path == tmp_path / "users" / "cli_ann" / ".lock"
    with lock:
        with lock:  # a write inside a write of the same user does not deadlock
            assert taken_elsewhere(lock.path)
        assert taken_elsewhere(lock.path)
    assert not taken_elsewhere(lock.path)


def test_another_thread_waits_for_the_holder(tmp_path: Path) -> None:
    lock = file_lock(tmp_path / "x.lock")
    order: list[str] = []

    def wait_then_write() -> None:
        with lock:
            order.append("waiter")

    with lock:
        waiter = threading.Thread(target=wait_then_write)
        waiter.start()
        waiter.join(0.2)
        order.append("holder")
    waiter.join(5)
    assert order == ["holder", "waiter"]


async def test_an_async_holder_waits_without_blocking_the_loop_and_can_be_cancelled(
    tmp_path: Path,
) -> None:
    lock = file_lock(tmp_path / "s.lock")
    with held_elsewhere(lock.path):
        waiter = asyncio.create_task(lock.hold().__aenter__())
        await asyncio.sleep(0.1)  # the loop keeps running meanwhile
        assert not waiter.done()
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
    assert not taken_elsewhere(lock.path)  # the cancelled waiter owns nothing
    async with lock.hold():
        assert taken_elsewhere(lock.path)


def test_a_second_service_lock_refuses_and_names_the_holder(tmp_path: Path) -> None:
    with (
        ServiceLock(tmp_path),
        pytest.raises(
            DataDirBusyError,
            match=re.escape(f"(pid {os.getpid()}) is already running on {tmp_path};"),
        ),
    ):
        ServiceLock(tmp_path).acquire()
    with ServiceLock(tmp_path):  # released on the way out
        pass
