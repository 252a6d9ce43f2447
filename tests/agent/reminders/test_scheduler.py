"""The scheduler seam over a real APScheduler AsyncIOScheduler, with the real clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from agent.reminders import store as rs
from agent.reminders.scheduler import APSchedulerAdapter
from agent.reminders.service import ReminderService
from agent.reminders.store import ReminderStore
from bot.schema import BotStateDB as StateDB
from tests.agent.reminders.conftest import ALICE, MINT, Outbox, act


@pytest.fixture
async def aps() -> AsyncIterator[Any]:
    scheduler = AsyncIOScheduler()
    scheduler.start()
    yield scheduler
    scheduler.shutdown(wait=False)


async def _wait_for(condition: Any, seconds: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_adapter_fires_in_time_order_replaces_and_cancels(aps: Any) -> None:
    calls: list[str] = []

    async def dispatch(key: str) -> None:
        if key == "boom":
            raise RuntimeError("one wake-up failing")
        calls.append(key)

    adapter = APSchedulerAdapter(aps, dispatch)
    now = datetime.now(UTC)
    adapter.schedule_at(now + timedelta(seconds=0.3), "a")
    adapter.schedule_at(now + timedelta(seconds=0.1), "b")
    adapter.schedule_at(now + timedelta(seconds=0.2), "b")  # replaces the first "b"
    adapter.schedule_at(now + timedelta(seconds=0.1), "c")
    adapter.schedule_at(now + timedelta(seconds=0.05), "boom")
    adapter.cancel("c")
    adapter.cancel("never-scheduled")
    adapter.schedule_at(now - timedelta(hours=3), "missed")  # long past: fires at once
    await _wait_for(lambda: len(calls) >= 3)
    await asyncio.sleep(0.2)
    assert calls == ["missed", "b", "a"]


async def test_restart_over_real_schedulers_fires_once(tmp_path: Path, aps: Any) -> None:
    db = tmp_path / "pcai.db"
    first_state = StateDB(db)
    first = ReminderService(
        ReminderStore(first_state),
        default_zone="Asia/Taipei",
        clock=lambda: datetime.now(UTC),
        scheduler=APSchedulerAdapter(AsyncIOScheduler()),  # never started: the process dies
        sender=Outbox(),
        acts=MINT.check,
    )
    due = datetime.now(UTC) + timedelta(seconds=0.4)
    row = first.propose(ALICE, "stretch", due)
    first.confirm(act(ALICE, row.id), ALICE, row.id)
    first_state.close()

    outbox = Outbox()
    adapter = APSchedulerAdapter(aps)
    state = StateDB(db)
    second = ReminderService(
        ReminderStore(state),
        default_zone="Asia/Taipei",
        clock=lambda: datetime.now(UTC),
        scheduler=adapter,
        sender=outbox,
    )
    adapter.dispatch = second.on_due
    assert second.start().scheduled == 1
    await _wait_for(lambda: bool(outbox.sent))
    fired_at = datetime.now(UTC)
    await asyncio.sleep(0.2)
    assert [r for r, _ in outbox.sent] == [row.id]
    assert timedelta(0) <= fired_at - due < timedelta(seconds=2)
    assert second.store.get(ALICE, row.id).status == rs.SENT
    assert second.start().scheduled == 0  # nothing left to schedule
    state.close()
