"""Scheduled jobs: each body idempotent and logged, run by APScheduler or PTB's JobQueue."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from telegram.ext import ApplicationBuilder

from agent.deferred import KIND_INDEX, Task, WorkQueue
from bot.app import Services, build_services
from bot.jobs import (
    JobRunner,
    JobSpec,
    default_jobs,
    index_job,
    lifecycle_job,
    pending_expiry_job,
)
from bot.scheduling import ptb_job_setup, register_ptb_jobs, scheduled, start_scheduler
from bot.settings import Settings
from history.sessions import Session
from memory.index.embedders import E5Embedder

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


async def test_idle_and_index_jobs_do_their_work_once(services: Services) -> None:
    session = Session("telegram_5")
    session.append("user", "幫我比較 Raspberry Pi 和 NUC 的耗電", T0)
    session.append("assistant", "NUC 約 10W，Pi 約 3W。", T0 + timedelta(seconds=30))
    services.sessions.save(session)
    services.daily_log.append_user_message("telegram_5", session.messages[0].content, T0, "m1")

    clock = [T0 + timedelta(hours=2)]
    runner = JobRunner(services, now=lambda: clock[0])
    idle, index = default_jobs()[0], default_jobs()[1]
    first = await runner.run(idle)
    assert first is not None and first.ok and first.detail.startswith("1 idle summaries")
    again = await runner.run(idle)
    assert again is not None and again.detail == "0 idle summaries" and again.runs == 2

    # the idle summary indexed itself; the daily-log line waits for the index job
    indexed = await runner.run(index)
    assert indexed is not None and indexed.ok and indexed.detail.startswith("1 units added")
    paths = services.store.indexed_paths("telegram_5")
    assert {"auto_summaries.md", "memory/2026-03-01.md"} <= paths
    assert (await index_job(services, clock[0])).startswith("0 units added")


async def test_pending_expiry_tells_each_user_once(services: Services) -> None:
    services.pending.add("telegram_8", "我的生日是 5 月 3 日", now=T0)
    told: list[tuple[str, str]] = []

    async def notify(user_key: str, text: str) -> None:
        told.append((user_key, text))

    body = pending_expiry_job(notify)
    assert await body(services, T0 + timedelta(minutes=10)) == "0 proposals expired, 0 users told"
    assert await body(services, T0 + timedelta(minutes=31)) == "1 proposals expired, 1 users told"
    assert await body(services, T0 + timedelta(minutes=40)) == "0 proposals expired, 0 users told"
    assert told == [("telegram_8", told[0][1])] and "5 月 3 日" in told[0][1]


async def test_a_failing_job_is_logged_and_does_not_raise(services: Services, caplog) -> None:  # type: ignore[no-untyped-def]
    async def broken(services: Services, now: datetime) -> str:
        raise RuntimeError("disk full")

    status = await JobRunner(services).run(JobSpec("broken", broken, every=timedelta(minutes=1)))
    assert status is not None and not status.ok and "disk full" in status.detail
    assert any("job broken failed" in r.message for r in caplog.records)
    assert (await lifecycle_job(services, T0)).endswith("over 0 users")


async def test_apscheduler_runs_the_jobs(services: Services) -> None:
    ran = asyncio.Event()

    async def tick(services: Services, now: datetime) -> str:
        ran.set()
        return "tick"

    runner = JobRunner(services)
    spec = JobSpec("tick", tick, every=timedelta(seconds=30), first=timedelta(0))
    scheduler = start_scheduler(runner, [spec, *default_jobs()])
    try:
        assert {j.id for j in scheduler.get_jobs()} == {
            "tick",
            "idle_summaries",
            "index",
            "pending_expiry",
            "forget_undo",
            "lifecycle",
            "fading",
        }
        await asyncio.wait_for(ran.wait(), timeout=10)
    finally:
        scheduler.shutdown(wait=False)
    assert runner.status["tick"].detail == "tick"


async def test_ptb_job_queue_gets_every_job(services: Services) -> None:
    application = ApplicationBuilder().token("123:TEST").build()
    runner = JobRunner(services)
    assert register_ptb_jobs(application, runner, default_jobs()) == 6
    names = sorted(job.name for job in application.job_queue.jobs())
    assert names == [
        "fading",
        "forget_undo",
        "idle_summaries",
        "index",
        "lifecycle",
        "pending_expiry",
    ]


# Far from UTC and from this machine's zone, with a 45-minute offset and no DST.
ZONE = "Asia/Kathmandu"
EVERY = {
    "idle_summaries": timedelta(minutes=5),
    "index": timedelta(minutes=1),  # a hand edit of MEMORY.md is searchable within a minute
    "pending_expiry": timedelta(minutes=1),
    "forget_undo": timedelta(minutes=1),
    "fading": timedelta(days=7),  # the "keep these fading memories?" notice, weekly
}


def _next_0330(zone: ZoneInfo, after: datetime) -> datetime:
    local = after.astimezone(zone)
    at = local.replace(hour=3, minute=30, second=0, microsecond=0)
    return at if at > local else at + timedelta(days=1)


@pytest.fixture
def zoned(settings: Settings, embedder: E5Embedder) -> Iterator[Services]:
    """Services whose users live in ``ZONE`` (PCAI_TIMEZONE)."""
    built = build_services(replace(settings, timezone=ZONE), embedder=embedder)
    yield built
    built.close()


async def test_the_bot_runs_each_job_at_its_interval_and_lifecycle_at_0330_local(
    zoned: Services,
) -> None:
    application = ApplicationBuilder().token("123:TEST").build()
    ptb_job_setup(zoned)(application)  # what `pcai run` hands build_application
    queue = application.job_queue
    started = datetime.now(UTC)
    await queue.start()
    try:
        jobs = {job.name: job for job in queue.jobs()}
        intervals = {n: j.job.trigger.interval for n, j in jobs.items() if n != "lifecycle"}
        assert intervals == EVERY
        # The first ticks come soon after start: indexing in 5 s, the others in 15 s.
        first = {n: (j.next_t - started).total_seconds() for n, j in jobs.items()}
        assert 4 <= first["index"] <= 7
        assert all(14 <= first[n] <= 17 for n in EVERY if n != "index"), first
        nightly = jobs["lifecycle"].next_t
        assert nightly is not None
        assert nightly == _next_0330(ZoneInfo(ZONE), started)
        assert nightly.astimezone(ZoneInfo(ZONE)).strftime("%H:%M") == "03:30"
        assert nightly.astimezone(UTC).strftime("%H:%M") == "21:45"  # 03:30 at UTC+05:45
    finally:
        await queue.stop(wait=False)


async def test_the_terminal_scheduler_uses_the_same_intervals_and_zone(zoned: Services) -> None:
    started = datetime.now(UTC)
    scheduler = start_scheduler(JobRunner(zoned, tz=zoned.tz), default_jobs())
    try:
        jobs = {job.id: job for job in scheduler.get_jobs()}
        intervals = {n: j.trigger.interval for n, j in jobs.items() if n != "lifecycle"}
        assert intervals == EVERY
        assert jobs["lifecycle"].next_run_time == _next_0330(ZoneInfo(ZONE), started)
    finally:
        scheduler.shutdown(wait=False)


async def test_the_terminal_scheduler_stops_with_its_block(services: Services) -> None:
    told: list[str] = []

    async def notify(user_key: str, text: str) -> None:
        told.append(user_key)

    services.pending.add("cli_ann", "I like green tea", now=datetime.now(UTC) - timedelta(hours=1))
    async with scheduled(services, notify) as runner:
        # the scheduled tick comes 15 s in; run the same spec through the same runner now
        await runner.run(default_jobs(notify)[2])
    assert told == ["cli_ann"] and runner.status["pending_expiry"].ok


def test_ptb_setup_hook_registers_on_the_application(services: Services) -> None:
    application = ApplicationBuilder().token("123:TEST").build()
    ptb_job_setup(services)(application)
    assert len(application.job_queue.jobs()) == 6


async def test_index_job_leaves_a_user_to_the_worker_while_their_rows_wait(
    services: Services,
) -> None:
    # A turn's log line with its index row queued: the worker indexes it (at the background
    # priority); the minute job embedding it too would spend the CPU twice.
    services.daily_log.append_user_message("telegram_6", "NUC 的耗電是多少？", T0, "m1")
    work = WorkQueue(services.state)
    work.add("telegram_6", [Task(KIND_INDEX, {"files": ["memory/2026-03-01.md"]})], T0)
    assert (await index_job(services, T0)).startswith("0 units added")
    assert "memory/2026-03-01.md" not in services.store.indexed_paths("telegram_6")

    # Once the worker is done with the user (or dropped a failing row), the job covers them.
    work.done([w.seq for w in work.pending()])
    assert (await index_job(services, T0)).startswith("1 units added")
    assert "memory/2026-03-01.md" in services.store.indexed_paths("telegram_6")
