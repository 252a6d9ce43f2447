"""A fake clock, a recording scheduler and sender, and a service over a real pcai.db.

The scheduler and the sender stand in for what is outside the reminder core (APScheduler /
PTB's JobQueue, Telegram): the scheduler only remembers "wake key at time" and the test
drives the wake-ups in time order; the sender records what would have been sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from agent.reminders.errors import NotDeliveredError
from agent.reminders.service import ReminderService
from agent.reminders.store import Reminder, ReminderStore
from bot.schema import BotStateDB as StateDB
from memory.write.consent import Action, UserAct, UserActMint

TPE = ZoneInfo("Asia/Taipei")
ALICE = "telegram_1001"
BOB = "telegram_2002"
T0 = datetime(2026, 3, 4, 10, 0, tzinfo=TPE)  # a Wednesday


class ProcessDied(BaseException):
    """The process stops mid-send (not an Exception: nothing in the service may catch it)."""


@dataclass
class Clock:
    """A settable clock."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now += timedelta(**kw)
        return self.now


@dataclass
class Scheduler:
    """Remembers one wake-up time per key, like APScheduler with replace_existing."""

    jobs: dict[str, datetime] = field(default_factory=dict)

    def schedule_at(self, when: datetime, key: str) -> None:
        self.jobs[key] = when

    def cancel(self, key: str) -> None:
        self.jobs.pop(key, None)

    def pop_due(self, now: datetime) -> list[str]:
        due = sorted((w, k) for k, w in self.jobs.items() if w <= now)
        for _, key in due:
            del self.jobs[key]
        return [k for _, k in due]


@dataclass
class Outbox:
    """The transport: records each send; can die before or after it, or refuse it."""

    sent: list[tuple[int, str]] = field(default_factory=list)
    die: str = ""  # "before" / "after" the message leaves
    refuse: bool = False
    error: bool = False

    async def __call__(self, reminder: Reminder, text: str) -> str:
        await asyncio.sleep(0)  # a real send yields to the loop: other wake-ups run meanwhile
        if self.die == "before":
            raise ProcessDied
        if self.refuse:
            raise NotDeliveredError("chat not found")
        if self.error:
            raise TimeoutError("the request timed out")  # may or may not have arrived
        self.sent.append((reminder.id, text))
        if self.die == "after":
            raise ProcessDied
        return str(len(self.sent))


MINT = UserActMint()  # the bot layer's: the tests play the user's button presses


def act(user_key: str, reminder_id: int, action: Action = "confirm") -> UserAct:
    """The user's sealed answer to reminder ``reminder_id`` (what a button press makes)."""
    return MINT.act(user_key, str(reminder_id), action, via="button", kind="reminder")


@dataclass
class Process:
    """One run of the bot: its own connection to pcai.db, scheduler, sender and service."""

    state: StateDB
    scheduler: Scheduler
    outbox: Outbox
    service: ReminderService

    async def run_until(self, when: datetime, clock: Clock) -> None:
        """Let time pass until ``when``, waking every job in order at its time."""
        while True:
            pending = sorted(w for w in self.scheduler.jobs.values() if w <= when)
            if not pending:
                break
            clock.now = max(clock.now, pending[0])
            for key in self.scheduler.pop_due(clock.now):
                await self.service.on_due(key)
        clock.now = max(clock.now, when)


@dataclass
class World:
    """The pcai.db file and the clock that outlive any one process."""

    db: Path
    clock: Clock
    processes: list[Process] = field(default_factory=list)

    def start(
        self,
        outbox: Outbox | None = None,
        zone: str = "Asia/Taipei",
        snooze_length: timedelta = timedelta(minutes=10),
    ) -> Process:
        """A fresh process over the same pcai.db (the previous one is left as it died)."""
        state = StateDB(self.db)
        scheduler = Scheduler()
        box = outbox or Outbox()
        service = ReminderService(
            ReminderStore(state),
            default_zone=zone,
            clock=self.clock,
            scheduler=scheduler,
            sender=box,
            acts=MINT.check,
            snooze_length=snooze_length,
        )
        proc = Process(state, scheduler, box, service)
        self.processes.append(proc)
        return proc


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path / "botmemory" / "pcai.db", Clock())
    yield w
    for proc in w.processes:
        proc.state.close()
