"""Scheduled work (DESIGN "Scheduled work"): idle summaries, indexing, expiry, lifecycle.

Each job is a plain ``async def body(services, now) -> str`` that returns one line for the
log. :class:`JobRunner` runs a body: never two runs of one job at once, every run logged,
errors caught and logged with the traceback (a failed run is retried at the next tick), and
the last outcome kept for ``/stats`` (which shows only when and whether it ran: a job's report
covers every user). Blocking work (SQLite, embedding, Markdown files) runs
in a thread, so message handling never waits for a job.

The same specs are scheduled by PTB's JobQueue when the Telegram bot runs
(:func:`register_ptb_jobs`) or by a plain APScheduler ``AsyncIOScheduler`` in the terminal
chat (:func:`start_scheduler`). Every body is idempotent: the idle summary records what it
summarised, the indexer compares unit hashes, pending expiry reports each proposal once,
and a second lifecycle run the same night changes nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time as clock
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from history.dailylog import index_user_files

if TYPE_CHECKING:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.app import Services

log = logging.getLogger(__name__)

# (user_key, text): tells one user something outside a reply (Telegram message, terminal line).
Notifier = Callable[[str, str], Awaitable[None]]
JobBody = Callable[["Services", datetime], Awaitable[str]]

IDLE_EVERY = timedelta(minutes=5)
INDEX_EVERY = timedelta(minutes=1)  # a hand edit of MEMORY.md is searchable within a minute
EXPIRY_EVERY = timedelta(minutes=1)
UNDO_EXPIRY_EVERY = timedelta(minutes=1)  # /undo's window is minutes: check each minute
LIFECYCLE_AT = time(3, 30)  # nightly, in the user's time zone


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One scheduled job: its body and when it runs (every ``every`` or daily at ``daily_at``)."""

    name: str
    body: JobBody
    every: timedelta | None = None
    daily_at: time | None = None
    first: timedelta = timedelta(seconds=15)


@dataclass(frozen=True, slots=True)
class JobStatus:
    """The last run of one job."""

    name: str
    last_run: datetime
    ok: bool
    detail: str
    seconds: float
    runs: int


def expiry_notice(text: str) -> str:
    """The one sentence a user gets when a proposed memory expired unconfirmed."""
    short = text if len(text) <= 80 else text[:79] + "…"
    return (
        f"⌛ 待確認的記憶已過期，沒有寫入：「{short}」 "
        f"(This memory proposal expired and was not saved.)"
    )


# -- the bodies --------------------------------------------------------------------------
async def idle_summaries_job(services: Services, now: datetime) -> str:
    """Seed 004 §3.1.3: one summary for each session idle over 60 minutes."""
    made = await services.idle.run(now)
    return f"{len(made)} idle summaries" + (
        f" ({', '.join(r.session_id for r in made)})" if made else ""
    )


async def index_job(services: Services, now: datetime) -> str:
    """New daily-log lines, summaries and hand edits of MEMORY.md, indexed incrementally."""
    stats = await asyncio.to_thread(
        index_user_files, services.memory.indexer, services.settings.data_dir
    )
    return f"{stats.added} units added, {stats.removed} removed, {stats.files} files changed"


def pending_expiry_job(notifier: Notifier | None = None) -> JobBody:
    """Expire proposals past their time and tell each owner once (seed 004 §3.1.1)."""

    async def body(services: Services, now: datetime) -> str:
        expired = await asyncio.to_thread(services.pending.expire_due, now)
        told = 0
        for proposal in expired:
            if notifier is None:
                continue
            try:
                await notifier(proposal.user_key, expiry_notice(proposal.text))
                told += 1
            except Exception:  # an unreachable user must not stop the others
                log.warning("could not tell %s about expired %s", proposal.user_key, proposal.id)
        return f"{len(expired)} proposals expired, {told} users told"

    return body


async def forget_undo_job(services: Services, now: datetime) -> str:
    """Drop the undo copies of forgotten memories whose /undo window has closed."""
    dropped = await asyncio.to_thread(services.forgetter.expire, now)
    return f"{dropped} undo copies dropped"


async def lifecycle_job(services: Services, now: datetime) -> str:
    """Seed 002 §4's nightly health scores, low priority / archive, and old-archive deletion."""
    report = await asyncio.to_thread(services.lifecycle.run_lifecycle, now)
    return (
        f"{len(report.changes)} status changes ({len(report.deleted)} deleted) "
        f"over {report.users} users"
    )


def default_jobs(notifier: Notifier | None = None) -> list[JobSpec]:
    """The jobs of DESIGN "Scheduled work" (and forget's undo expiry) with their schedules."""
    return [
        JobSpec("idle_summaries", idle_summaries_job, every=IDLE_EVERY),
        JobSpec("index", index_job, every=INDEX_EVERY, first=timedelta(seconds=5)),
        JobSpec("pending_expiry", pending_expiry_job(notifier), every=EXPIRY_EVERY),
        JobSpec("forget_undo", forget_undo_job, every=UNDO_EXPIRY_EVERY),
        JobSpec("lifecycle", lifecycle_job, daily_at=LIFECYCLE_AT),
    ]


# -- running -----------------------------------------------------------------------------
@dataclass
class JobRunner:
    """Runs job bodies one at a time per job, logs them, and keeps their last status."""

    services: Services
    tz: tzinfo | None = None
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    status: dict[str, JobStatus] = field(default_factory=dict)
    _running: set[str] = field(default_factory=set)

    async def run(self, spec: JobSpec) -> JobStatus | None:
        """Run one job now; None when the previous run of it is still going."""
        if spec.name in self._running:
            log.info("job %s still running; this tick is skipped", spec.name)
            return None
        self._running.add(spec.name)
        started = clock.monotonic()
        when = self.now()
        try:
            detail, ok = await spec.body(self.services, when), True
            log.info("job %s: %s", spec.name, detail)
        except Exception as exc:
            detail, ok = f"failed: {exc}", False
            log.error("job %s failed; it runs again at its next tick", spec.name, exc_info=True)
        finally:
            self._running.discard(spec.name)
        previous = self.status.get(spec.name)
        status = JobStatus(
            spec.name,
            when,
            ok,
            detail,
            round(clock.monotonic() - started, 3),
            (previous.runs if previous else 0) + 1,
        )
        self.status[spec.name] = status
        return status

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no job is running (at shutdown); False if one still runs at ``timeout``."""
        deadline = clock.monotonic() + timeout
        while self._running and clock.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return not self._running

    def summary(self) -> list[tuple[str, str]]:
        """``(job, "MM-DD HH:MM ok")`` pairs for a user's stats view.

        The detail stays in the log: it covers every user (session ids, counts, a failing
        user's file), and a user sees only their own.
        """
        return [
            (s.name, f"{s.last_run.astimezone(self.tz):%m-%d %H:%M} {'ok' if s.ok else 'FAILED'}")
            for s in sorted(self.status.values(), key=lambda s: s.name)
        ]


def local_time(at: time, tz: tzinfo | None) -> time:
    """``at`` with the user's zone attached (the machine's zone when ``tz`` is None)."""
    return at.replace(tzinfo=tz or datetime.now().astimezone().tzinfo)


def register_ptb_jobs(application: Any, runner: JobRunner, specs: Sequence[JobSpec]) -> int:
    """Schedule ``specs`` on a python-telegram-bot Application's JobQueue; returns how many."""
    queue = application.job_queue
    if queue is None:
        log.warning("the JobQueue is not available (install python-telegram-bot[job-queue])")
        return 0
    for spec in specs:

        async def callback(context: Any, spec: JobSpec = spec) -> None:
            await runner.run(spec)

        options = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 300}
        if spec.every is not None:
            queue.run_repeating(
                callback, interval=spec.every, first=spec.first, name=spec.name, job_kwargs=options
            )
        elif spec.daily_at is not None:
            queue.run_daily(
                callback, local_time(spec.daily_at, runner.tz), name=spec.name, job_kwargs=options
            )
    return len(specs)


def start_scheduler(runner: JobRunner, specs: Sequence[JobSpec]) -> AsyncIOScheduler:
    """Start an APScheduler ``AsyncIOScheduler`` with ``specs`` (call inside a running loop).

    The caller owns it: ``scheduler.shutdown(wait=False)`` on the way out.
    """
    from apscheduler.schedulers.asyncio import AsyncIOScheduler
    from apscheduler.triggers.cron import CronTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    scheduler = AsyncIOScheduler(event_loop=asyncio.get_running_loop())
    for spec in specs:
        trigger: Any
        first: dict[str, datetime] = {}
        if spec.every is not None:
            trigger = IntervalTrigger(seconds=spec.every.total_seconds())
            first["next_run_time"] = datetime.now(UTC) + spec.first
        elif spec.daily_at is not None:
            at = local_time(spec.daily_at, runner.tz)
            trigger = CronTrigger(hour=at.hour, minute=at.minute, timezone=at.tzinfo)
        else:
            continue
        scheduler.add_job(
            runner.run,
            trigger,
            args=[spec],
            id=spec.name,
            name=spec.name,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=300,
            **first,
        )
    scheduler.start()
    return scheduler


def telegram_notifier(application: Any) -> Notifier:
    """A notifier that writes to ``telegram_<id>`` users in their private chat."""

    async def notify(user_key: str, text: str) -> None:
        kind, _, ident = user_key.partition("_")
        if kind != "telegram" or not ident.isdigit():
            return
        await application.bot.send_message(chat_id=int(ident), text=text)

    return notify


def ptb_job_setup(services: Services, runner: JobRunner | None = None) -> Callable[[Any], None]:
    """The ``jobs=`` hook of ``build_application``: every job on the bot's JobQueue.

    Expired proposals are announced to their owners in their private chat.
    """
    runner = runner or JobRunner(services, tz=services.tz)

    def setup(application: Any) -> None:
        register_ptb_jobs(application, runner, default_jobs(telegram_notifier(application)))

    return setup


@asynccontextmanager
async def scheduled(
    services: Services, notifier: Notifier | None = None, runner: JobRunner | None = None
) -> AsyncIterator[JobRunner]:
    """Run every job on an ``AsyncIOScheduler`` for the duration of the block (terminal chat).

    On the way out the scheduler stops and a job still running is given time to finish.
    """
    runner = runner or JobRunner(services, tz=services.tz)
    scheduler = start_scheduler(runner, default_jobs(notifier))
    try:
        yield runner
    finally:
        scheduler.shutdown(wait=False)
        await runner.drain()
