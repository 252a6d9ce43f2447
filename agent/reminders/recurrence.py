"""Recurrence rules and wall-clock arithmetic in the user's zone (DST included).

A rule keeps the *wall-clock* time ("every Monday 08:00"): each occurrence is that local time
on its own date, so 08:00 stays 08:00 across a daylight-saving change (the UTC instant moves
by an hour). A wall time that does not exist on a spring-forward day (02:30 in New York) fires
at the instant it maps to (03:30); one that exists twice in the autumn fires at the first.
A monthly rule on a day a month lacks (the 31st) fires on that month's last day.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo


class Frequency(StrEnum):
    """How often a rule repeats (the first word of its stored form)."""

    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    YEARLY = "yearly"


DAILY, WEEKLY, MONTHLY, YEARLY = (
    Frequency.DAILY,
    Frequency.WEEKLY,
    Frequency.MONTHLY,
    Frequency.YEARLY,
)
KINDS = tuple(Frequency)

WEEKDAYS_ZH = "一二三四五六日"
WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS_EN = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_ENCODED = re.compile(
    r"^(?P<kind>daily|weekly|monthly|yearly)"
    r"(?: (?P<a>\d{1,2})(?:-(?P<b>\d{1,2}))?)? (?P<h>\d{2}):(?P<m>\d{2})$"
)


def at_wall(day: date, hour: int, minute: int, zone: ZoneInfo) -> datetime:
    """The instant the wall clock in ``zone`` shows ``day hour:minute`` (gaps move forward)."""
    naive = datetime.combine(day, time(hour, minute), tzinfo=zone)
    # A round trip through the epoch resolves a wall time inside a DST gap to a real instant.
    return datetime.fromtimestamp(naive.timestamp(), zone)


def clamp_day(year: int, month: int, day: int) -> date:
    """``year-month-day``, the month's last day when the month is shorter."""
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def _next_month(year: int, month: int) -> tuple[int, int]:
    return (year + 1, 1) if month == 12 else (year, month + 1)


@dataclass(frozen=True, slots=True)
class Recurrence:
    """A repeating wall-clock time: daily, weekly (weekday), monthly (day), yearly (month/day)."""

    kind: Frequency
    hour: int
    minute: int
    weekday: int = 0  # weekly: Monday = 0
    day: int = 0  # monthly / yearly
    month: int = 0  # yearly

    def __post_init__(self) -> None:
        ok = (
            self.kind in KINDS
            and 0 <= self.hour <= 23
            and 0 <= self.minute <= 59
            and (self.kind != WEEKLY or 0 <= self.weekday <= 6)
            and (self.kind not in (MONTHLY, YEARLY) or 1 <= self.day <= 31)
            and (self.kind != YEARLY or 1 <= self.month <= 12)
        )
        if not ok:
            raise ValueError(f"not a valid recurrence: {self!r}")

    def encode(self) -> str:
        """``daily 08:00``, ``weekly 0 08:00``, ``monthly 31 08:00``, ``yearly 5-3 08:00``."""
        hm = f"{self.hour:02d}:{self.minute:02d}"
        if self.kind == WEEKLY:
            return f"{WEEKLY} {self.weekday} {hm}"
        if self.kind == MONTHLY:
            return f"{MONTHLY} {self.day} {hm}"
        if self.kind == YEARLY:
            return f"{YEARLY} {self.month}-{self.day} {hm}"
        return f"{DAILY} {hm}"

    @classmethod
    def decode(cls, raw: str) -> Recurrence:
        """The rule :meth:`encode` wrote; ``ValueError`` on anything else."""
        m = _ENCODED.match(raw.strip())
        if not m:
            raise ValueError(f"not a recurrence: {raw!r}")
        kind, a, b = Frequency(m["kind"]), m["a"], m["b"]
        h, mi = int(m["h"]), int(m["m"])
        if kind == WEEKLY and a is not None and b is None:
            return cls(kind, h, mi, weekday=int(a))
        if kind == MONTHLY and a is not None and b is None:
            return cls(kind, h, mi, day=int(a))
        if kind == YEARLY and a is not None and b is not None:
            return cls(kind, h, mi, month=int(a), day=int(b))
        if kind == DAILY and a is None:
            return cls(kind, h, mi)
        raise ValueError(f"not a recurrence: {raw!r}")

    def _dates_from(self, start: date) -> list[date]:
        """The first two matching dates on or after ``start``, in order."""
        if self.kind == DAILY:
            return [start, start + timedelta(days=1)]
        if self.kind == WEEKLY:
            first = start + timedelta(days=(self.weekday - start.weekday()) % 7)
            return [first, first + timedelta(days=7)]
        out: list[date] = []
        year, month = start.year, start.month
        while len(out) < 2:
            d = clamp_day(year, month if self.kind == MONTHLY else self.month, self.day)
            if d >= start:
                out.append(d)
            if self.kind == MONTHLY:
                year, month = _next_month(year, month)
            else:
                year += 1
        return out

    def next_after(self, after: datetime, zone: ZoneInfo, start: date | None = None) -> datetime:
        """The first occurrence strictly after ``after`` (and on or after ``start``, if given)."""
        day = after.astimezone(zone).date()
        after = after.astimezone(UTC)  # compare instants, not wall clocks
        if start is not None and start > day:
            day = start
        while True:
            for d in self._dates_from(day):
                candidate = at_wall(d, self.hour, self.minute, zone)
                if candidate > after:
                    return candidate
            day = self._dates_from(day)[1] + timedelta(days=1)

    def describe_zh(self) -> str:
        """每天 08:00 / 每週一 08:00 / 每月 15 日 08:00 / 每年 5 月 3 日 08:00."""
        hm = f"{self.hour:02d}:{self.minute:02d}"
        if self.kind == WEEKLY:
            return f"每週{WEEKDAYS_ZH[self.weekday]} {hm}"
        if self.kind == MONTHLY:
            return f"每月 {self.day} 日 {hm}"
        if self.kind == YEARLY:
            return f"每年 {self.month} 月 {self.day} 日 {hm}"
        return f"每天 {hm}"

    def describe_en(self) -> str:
        """every day at 08:00 / every Monday at 08:00 / every month on day 15 at 08:00 / ..."""
        hm = f"{self.hour:02d}:{self.minute:02d}"
        if self.kind == WEEKLY:
            return f"every {WEEKDAYS_EN[self.weekday]} at {hm}"
        if self.kind == MONTHLY:
            return f"every month on day {self.day} at {hm}"
        if self.kind == YEARLY:
            return f"every year on {self.day} {MONTHS_EN[self.month - 1]} at {hm}"
        return f"every day at {hm}"


def rule_for(kind: str, due_local: datetime) -> Recurrence:
    """The rule of ``kind`` that repeats ``due_local`` (the model's tool names only the kind)."""
    h, m = due_local.hour, due_local.minute
    if kind == WEEKLY:
        return Recurrence(WEEKLY, h, m, weekday=due_local.weekday())
    if kind == MONTHLY:
        return Recurrence(MONTHLY, h, m, day=due_local.day)
    if kind == YEARLY:
        return Recurrence(YEARLY, h, m, month=due_local.month, day=due_local.day)
    if kind == DAILY:
        return Recurrence(DAILY, h, m)
    raise ValueError(f"not a recurrence kind: {kind!r}")
