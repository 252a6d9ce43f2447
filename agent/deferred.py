"""Work that can wait (docs/architecture.md): a per-user queue in pcai.db and its worker.

A turn does only what its answer needs. What it leaves for later (indexing its log lines, the
compaction summary, the topic index) is appended to ``deferred_work`` in one transaction
after the session and the daily log are written and before the reply is sent; the app's
:class:`DeferredWorker` takes the rows in order, user by user, and deletes each row only when
its work is done. Every kind of work is idempotent, so a process that stops at any point
loses nothing: the next worker over the same data dir does what is left, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from memory.base.users import check_user_key
from memory.state.statedb import StateDB

log = logging.getLogger(__name__)
T = TypeVar("T")

KIND_INDEX = "index"  # {"files": [rel, ...]}: bring the index of these files up to date
KIND_TOPICS = "topics"  # {"sections", "known", "time"}: one turn of the topic index
KIND_COMPACT = "compact"  # {"count", "digest", "time", "summary"?}: a planned compaction

# A row that keeps failing is retried after 2, 4, 8 ... seconds, then dropped (logged): the
# minute index job and the next turn's compaction check pick up what it would have done.
MAX_ATTEMPTS = 6
TICK_SECONDS = 1.0  # the worker also looks at the queue this often without being woken
MAX_LANES = 4  # users worked on at once: one per core, up to this
BACKGROUND_NICE = 10  # the worker's threads yield the CPU to the turns' (nice 0)


@dataclass(frozen=True, slots=True)
class Task:
    """Work one turn leaves for later."""

    kind: str
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Work:
    """One row of the queue."""

    seq: int
    user_key: str
    kind: str
    payload: dict[str, Any]
    attempts: int  # started this many times before (a row started before may be half done)


class WorkQueue:
    """The ``deferred_work`` table: append, read in order, finish, retry."""

    def __init__(self, state: StateDB) -> None:
        self.state = state  # the table is migration m005_deferred_work's
        self._listeners: list[Callable[[], None]] = []

    def listen(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` (in the event loop) after work was added: the worker's doorbell."""
        self._listeners.append(wake)

    def notify(self) -> None:
        """Ring the doorbell (call from the event loop thread)."""
        for wake in self._listeners:
            wake()

    def add(self, user_key: str, tasks: Sequence[Task], now: datetime) -> None:
        """Append ``tasks`` for ``user_key`` in one transaction."""
        check_user_key(user_key)
        stamp = now.isoformat(timespec="seconds")
        rows = [
            (user_key, t.kind, json.dumps(dict(t.payload), ensure_ascii=False), stamp)
            for t in tasks
        ]
        if not rows:
            return
        with self.state.transaction() as conn:
            conn.executemany(
                "INSERT INTO deferred_work (user_key, kind, payload, created_at) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )

    def pending(self, owns: Callable[[str], bool] | None = None, limit: int = 2000) -> list[Work]:
        """Rows due now, oldest first; a user's rows stop at their first one still waiting."""
        now = time.time()
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT seq, user_key, kind, payload, attempts, retry_at FROM deferred_work "
                "ORDER BY seq LIMIT ?",
                (limit,),
            ).fetchall()
        out: list[Work] = []
        held: set[str] = set()  # users whose earlier row waits for its retry: order first
        for seq, user_key, kind, payload, attempts, retry_at in rows:
            if user_key in held or (owns is not None and not owns(user_key)):
                continue
            if float(retry_at) > now:
                held.add(user_key)
                continue
            out.append(Work(int(seq), str(user_key), str(kind), _load(payload), int(attempts)))
        return out

    def has(self, user_key: str, kind: str) -> bool:
        """Whether a row of ``kind`` waits for ``user_key``."""
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT 1 FROM deferred_work WHERE user_key=? AND kind=? LIMIT 1", (user_key, kind)
            ).fetchone()
        return row is not None

    def count(self, user_key: str | None = None) -> int:
        """How many rows wait (for ``user_key``, or for everyone)."""
        sql, args = "SELECT COUNT(*) FROM deferred_work", []
        if user_key is not None:
            sql, args = sql + " WHERE user_key=?", [user_key]
        with self.state.lock:
            return int(self.state.conn.execute(sql, args).fetchone()[0])

    def started(self, seqs: Iterable[int]) -> None:
        """Count an attempt on each row before its work begins (a retry knows it was begun)."""
        with self.state.transaction() as conn:
            conn.executemany(
                "UPDATE deferred_work SET attempts = attempts + 1 WHERE seq=?",
                [(s,) for s in seqs],
            )

    def save_payload(self, seq: int, payload: Mapping[str, Any]) -> None:
        """Keep what a step produced (a model's summary), so a retry reuses it."""
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE deferred_work SET payload=? WHERE seq=?",
                (json.dumps(dict(payload), ensure_ascii=False), seq),
            )

    def done(self, seqs: Iterable[int]) -> None:
        """Delete finished rows."""
        with self.state.transaction() as conn:
            conn.executemany("DELETE FROM deferred_work WHERE seq=?", [(s,) for s in seqs])

    def retry_now(self, owns: Callable[[str], bool] | None = None) -> None:
        """Make rows waiting for a retry due (a restart finishes what was left, at once)."""
        with self.state.transaction() as conn:
            rows = conn.execute(
                "SELECT seq, user_key FROM deferred_work WHERE retry_at > 0"
            ).fetchall()
            due = [(int(r[0]),) for r in rows if owns is None or owns(str(r[1]))]
            conn.executemany("UPDATE deferred_work SET retry_at = 0 WHERE seq=?", due)

    def failed(self, work: Work, error: str) -> bool:
        """Schedule a retry of ``work``; False when it was dropped after its last attempt."""
        attempts = work.attempts + 1
        if attempts >= MAX_ATTEMPTS:
            log.error(
                "%s: deferred %s work dropped after %d attempts: %s",
                work.user_key,
                work.kind,
                attempts,
                error,
            )
            self.done([work.seq])
            return False
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE deferred_work SET retry_at=?, last_error=? WHERE seq=?",
                (time.time() + 2.0**attempts, error[:500], work.seq),
            )
        return True


def worker_lanes() -> int:
    """How many users the worker works on at once: one per core this process may use."""
    return max(1, min(MAX_LANES, len(os.sched_getaffinity(0))))


def _yield_cpu() -> None:
    """Lower the calling thread's CPU priority (Linux: nice is per thread)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


def _load(raw: object) -> dict[str, Any]:
    try:
        data = json.loads(str(raw))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


# Does one user's due rows (in order) and returns the seqs it finished.
UserHandler = Callable[[str, list[Work]], Awaitable[list[int]]]


class DeferredWorker:
    """Drains the queue in the background: one user at a time, each user's rows in order.

    Owned by the app: started with the Telegram application (``post_init``) or the terminal
    chat, stopped and awaited on the way out. ``owns`` limits it to the users its front end
    serves (a terminal chat beside the service works off only its own user's rows).
    """

    def __init__(
        self,
        queue: WorkQueue,
        handle: UserHandler,
        *,
        owns: Callable[[str], bool] | None = None,
        tick: float = TICK_SECONDS,
        lanes: int = 0,
    ) -> None:
        self.queue = queue
        self.handle = handle
        self.owns = owns
        self.tick = tick
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._busy = False
        self._cuttable: set[asyncio.Task[Any]] = set()  # lanes in a model call
        # Set by the front end: hands a user the notices the work just queued (else the
        # minute job does).
        self.told: Callable[[str], Awaitable[object]] | None = None
        self.lanes = lanes or worker_lanes()
        self._pool: ThreadPoolExecutor | None = None
        queue.listen(self.wake)

    def wake(self) -> None:
        """Look at the queue now."""
        self._wake.set()

    async def run_once(self) -> int:
        """Do every row due now; returns how many rows were finished.

        Up to ``lanes`` users at a time (one lane per core): each user's rows stay in order,
        and a backlog left by a busy hour is worked off with every core.
        """
        self._busy = True
        try:
            rows = await asyncio.to_thread(self.queue.pending, self.owns)
            by_user: dict[str, list[Work]] = {}
            for work in rows:
                by_user.setdefault(work.user_key, []).append(work)
            gate = asyncio.Semaphore(self.lanes)

            async def one(user_key: str, works: list[Work]) -> int:
                async with gate:
                    if self._stopping:
                        return 0
                    await asyncio.to_thread(self.queue.started, [w.seq for w in works])
                    try:
                        return len(await self.handle(user_key, works))
                    except Exception:  # a bug: the rows stay for the next tick
                        log.exception("%s: deferred work failed", user_key)
                        return 0

            lanes = [asyncio.create_task(one(u, w)) for u, w in by_user.items()]
            done = await asyncio.gather(*lanes, return_exceptions=True)  # a cut model call too
            return sum(n for n in done if isinstance(n, int))
        finally:
            self._busy = False

    async def background(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in one of the worker's own threads, which the OS schedules after
        the turns' (nice +10): under load the answers come first and this work waits."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self.lanes, thread_name_prefix="pcai-deferred", initializer=_yield_cpu
            )
        return await asyncio.get_running_loop().run_in_executor(self._pool, partial(fn, *args))

    def cancellable(self, flag: bool) -> None:
        """Mark the calling lane as waiting on a model call a stop may cut (or no longer)."""
        task = asyncio.current_task()
        if task is None:
            return
        if flag:
            self._cuttable.add(task)
        else:
            self._cuttable.discard(task)

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                did = await self.run_once()
            except Exception:  # pcai.db busy or closed under us: try again at the next tick
                log.exception("the deferred-work worker failed; it retries at its next tick")
                did = 0
            if self._stopping:
                break
            if did:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.tick)

    async def start(self) -> None:
        """Start working off the queue (what a previous process left first)."""
        if self._task is None:
            self._stopping = False
            await asyncio.to_thread(self.queue.retry_now, self.owns)
            self._task = asyncio.create_task(self._run(), name="pcai-deferred-work")

    async def stop(self) -> None:
        """Finish the row in hand (a model call in progress is cut: it is redone later)."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        self._wake.set()
        for lane in list(self._cuttable):
            lane.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown)

    async def settle(self, timeout: float = 30.0) -> bool:
        """Wait until no due row is left (tests, benches, ``/new``); False at ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._busy and not await asyncio.to_thread(self.queue.pending, self.owns):
                return True
            if self._task is None:
                await self.run_once()
            else:
                self.wake()
                await asyncio.sleep(0.01)
        return False

    async def __aenter__(self) -> DeferredWorker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
