"""Values of the reminder service: its timings, results and listing rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from agent.reminders.recurrence import Recurrence

# The row, for the front ends and agent/forget.py: outside the wing only wiring sees the store.
from agent.reminders.store import Reminder as Reminder
from agent.reminders.texts import list_line


@dataclass(frozen=True, slots=True)
class ReminderConfig:
    """Timings of the reminder service."""

    proposal_ttl: timedelta = timedelta(minutes=30)
    late_after: timedelta = timedelta(minutes=2)  # fired later than this: "(late)"
    retry_after: timedelta = timedelta(minutes=1)  # after a send the transport refused
    max_attempts: int = 5
    early_seconds: float = 1.0  # a wake-up this early still fires (scheduler clock jitter)


@dataclass(frozen=True, slots=True)
class FireResult:
    """What one firing did: ``sent``, ``late``, ``unknown``, ``retry`` or ``failed``."""

    reminder: Reminder
    outcome: str
    text: str


@dataclass(frozen=True, slots=True)
class StartReport:
    """What :meth:`ReminderService.start` found and scheduled."""

    scheduled: int
    late: tuple[Reminder, ...]  # came due while the process was down: fire now, marked late
    uncertain: tuple[Reminder, ...]  # were being sent when it stopped: never sent again
    expired: tuple[Reminder, ...]  # proposals nobody answered
    briefings: int


@dataclass(frozen=True, slots=True)
class Listed:
    """A reminder as ``/reminders`` shows it: its next time in the user's zone and its rule."""

    reminder: Reminder
    next_local: datetime
    rule: Recurrence | None

    def line(self, lang: str = "zh") -> str:
        """The ``/reminders`` line of this reminder, in ``lang``."""
        r = self.reminder
        return list_line(r.number, self.next_local, r.text, self.rule, r.status, lang, r.zone)
