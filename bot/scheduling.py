"""When the jobs run: python-telegram-bot's JobQueue for the bot, APScheduler for the terminal.

The bodies, their specs and the :class:`~bot.jobs.JobRunner` are in :mod:`bot.jobs`; this
module only hands the same specs to one scheduler or the other. Intervals coalesce, one
instance at a time, and a tick missed by up to five minutes still runs; the nightly lifecycle
runs at its local time in the user's zone (the machine's when none is set).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, time, tzinfo
from typing import TYPE_CHECKING, Any

from bot.backup.schedule import backup_jobs
from bot.fading import fade_every, telegram_offer
from bot.isolation import Notifier
from bot.jobs import JobRunner, JobSpec, default_jobs, user_jobs

if TYPE_CHECKING:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.app import Services

log = logging.getLogger(__name__)


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
        from bot.telegram.context import DEPS

        kind, _, ident = user_key.partition("_")
        if kind != "telegram" or not ident.isdigit():
            return
        if DEPS in application.bot_data:  # a notice, not a proposal, is now the last word
            application.bot_data[DEPS].spoke(user_key)
        await application.bot.send_message(chat_id=int(ident), text=text)

    return notify


def ptb_job_setup(services: Services, runner: JobRunner | None = None) -> Callable[[Any], None]:
    """The ``jobs=`` hook of ``build_application``: every job on the bot's JobQueue.

    Expired proposals are announced to their owners in their private chat; fading memories
    come with keep buttons. Reminders and briefings go on the same JobQueue
    (:func:`bot.telegram.reminders.wire_reminders`).
    """
    runner = runner or JobRunner(services, tz=services.tz)

    def setup(application: Any) -> None:
        specs = default_jobs(
            telegram_notifier(application),
            telegram_offer(application),
            fade_every(services),
        ) + backup_jobs(services.settings)  # the nightly backup, when a folder is set
        register_ptb_jobs(application, runner, specs)
        if services.reminders is not None:
            from bot.telegram.reminders import wire_reminders

            wire_reminders(application, services.reminders)

    return setup


@asynccontextmanager
async def scheduled(
    services: Services,
    notifier: Notifier | None = None,
    runner: JobRunner | None = None,
    user_key: str | None = None,
    backups: bool = False,
) -> AsyncIterator[JobRunner]:
    """Run every job on an ``AsyncIOScheduler`` for the duration of the block (terminal chat).

    With ``user_key`` the jobs touch that user's files only (:func:`user_jobs`); ``backups``
    adds the nightly backup (``pcai run``'s terminal chat, never a ``pcai chat`` beside a
    service). On the way out the scheduler stops and a job still running is given time to
    finish.
    """
    runner = runner or JobRunner(services, tz=services.tz)
    every = fade_every(services)
    specs = (
        default_jobs(notifier, None, every)
        if user_key is None
        else user_jobs(user_key, notifier, every)
    )
    if backups:
        specs += backup_jobs(services.settings)
    scheduler = start_scheduler(runner, specs)
    try:
        yield runner
    finally:
        scheduler.shutdown(wait=False)
        await runner.drain()
