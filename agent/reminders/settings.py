"""Per-user reminder settings: the time zone (``/tz``) and the morning briefing time.

A user without a zone of their own uses the default (the setting ``PCAI_TIMEZONE``). When a
user changes zone, a reminder set for a clock time keeps it in the new zone ("every day 08:00"
stays 08:00 where the user now is) and one set as a span of time keeps its moment
(:mod:`agent.reminders.zones`).

The briefing is one daily wake-up per user (``briefing:<user key>``). Claiming the local date
in ``pcai.db`` before building it means one briefing a day however often the job wakes; a
briefing missed while the process was down is skipped (yesterday's morning news is stale).
"""

from __future__ import annotations

import logging
import re
import zoneinfo
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from agent.reminders.errors import BadBriefingTimeError, UnknownZoneError
from agent.reminders.recurrence import DAILY, Recurrence
from agent.reminders.scheduler import ReminderScheduler
from agent.reminders.store import INSTANT, SCHEDULED, WALL, Reminder, ReminderStore
from agent.reminders.users import UserSettings
from agent.reminders.zones import Moved, ZoneChange, ZoneMove

log = logging.getLogger(__name__)

_HHMM = re.compile(r"^\s*(\d{1,2})\s*[:：.點点]\s*(\d{2})?\s*分?\s*$|^\s*(\d{1,2})\s*$")
OFF_WORDS = frozenset({"off", "stop", "none", "關", "关", "關閉", "关闭", "取消", "停"})


@cache
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def machine_zone(localtime: Path = Path("/etc/localtime")) -> str:
    """The machine's IANA zone name (for an empty ``PCAI_TIMEZONE``); ``"UTC"`` if unknown.

    A stored reminder needs a zone *name* so that its wall-clock time survives DST changes;
    a fixed offset from ``datetime.now().astimezone()`` would not.
    """
    try:
        target = localtime.resolve(strict=True)
    except OSError:
        return "UTC"
    parts = target.parts
    for i in range(len(parts) - 1):
        name = "/".join(parts[i + 1 :])
        if parts[i] == "zoneinfo" and name in _zone_names().values():
            return name
    return "UTC"


def briefing_key(user_key: str) -> str:
    """The scheduler key of a user's briefing."""
    return f"briefing:{user_key}"


def parse_briefing_time(raw: str) -> str:
    """``07:30`` / ``7:30`` / ``7`` / ``7點30`` -> ``"07:30"``; an off word -> ``""``."""
    if raw.strip().lower() in OFF_WORDS:
        return ""
    raw = raw.strip()
    # "07:30", "7點30分": a time is short, so the pattern never sees a long run of blanks.
    m = _HHMM.match(raw) if len(raw) <= 20 else None
    if m:
        hour = int(m.group(1) or m.group(3))
        minute = int(m.group(2) or 0)
        if hour <= 23 and minute <= 59:
            return f"{hour:02d}:{minute:02d}"
    said = raw if len(raw) <= 40 else raw[:39] + "…"
    raise BadBriefingTimeError("bad_briefing", said=said)


def same_clock(was: datetime, zone: ZoneInfo) -> datetime:
    """The instant ``zone``'s clock shows ``was``'s date and time (a DST gap moves forward)."""
    naive = was.replace(tzinfo=zone, fold=0)
    return datetime.fromtimestamp(naive.timestamp(), zone)


def _moved(row: Reminder, was: datetime, zone: ZoneInfo, now: datetime) -> tuple[datetime, Moved]:
    """Where a scheduled reminder rings in ``zone`` after a change at ``now``, and why."""
    if row.anchor == INSTANT:  # "in 30 minutes" (or a retry): the same moment anywhere
        return row.due, Moved.KEPT
    there = same_clock(was, zone)
    if row.recurrence:
        due = Recurrence.decode(row.recurrence).next_after(now, zone)
        return due, Moved.NEXT if there <= now else Moved.CLOCK
    return (there, Moved.CLOCK) if there > now else (now, Moved.NOW)


class UserSettingsMixin:
    """Zone and briefing methods of :class:`agent.reminders.service.ReminderService`."""

    store: ReminderStore
    default_zone: ZoneInfo
    clock: Callable[[], datetime]
    scheduler: ReminderScheduler
    on_briefing: Callable[[str, date], Awaitable[None]] | None
    owns: Callable[[str], bool]

    @staticmethod
    def _zone_info(name: str) -> ZoneInfo:
        """The zone called ``name`` (any letter case), or :class:`UnknownZoneError`."""
        key = _zone_names().get(name.strip().lower())
        if key is None:
            raise UnknownZoneError("unknown_zone", name=name.strip())
        return ZoneInfo(key)

    def zone(self, user_key: str) -> ZoneInfo:
        """The user's zone, or the default one."""
        own = self.store.users.settings(user_key).zone
        if own:
            try:
                return ZoneInfo(own)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                log.warning("stored zone %r of %s is gone; using the default", own, user_key)
        return self.default_zone

    def set_zone(self, user_key: str, name: str) -> ZoneInfo:
        """``/tz <name>``: :meth:`change_zone`, returning the zone only."""
        return self.change_zone(user_key, name).zone

    def change_zone(self, user_key: str, name: str) -> ZoneChange:
        """``/tz <name>``: store the zone and move each scheduled reminder as the person meant.

        A moment ("in 30 minutes") keeps its instant. A clock time keeps its clock time in the
        new zone: a one-off whose clock time has already passed there rings now, a recurring
        one rings at its next occurrence there. The briefing follows the zone too. Returns
        what happened to each reminder (the reply names it).
        """
        zone = self._zone_info(name)
        self.store.users.set_zone(user_key, zone.key)
        now = self.clock()
        moves = []
        for row in self.store.of_user(user_key, (SCHEDULED,)):
            was = row.due.astimezone(self._row_zone(row.zone))
            due, how = _moved(row, was, zone, now)
            # Once due now it is a moment: a second /tz before it rings must not move it.
            anchor = INSTANT if how in (Moved.KEPT, Moved.NOW) else WALL
            moved = self.store.move_to_zone(row.id, zone.key, due, anchor)
            if moved is None:  # it fired meanwhile: nothing left to move
                continue
            self.scheduler.schedule_at(due, row.key)
            moves.append(ZoneMove(moved, how, was))
        self._schedule_briefing(self.store.users.settings(user_key))
        return ZoneChange(zone, tuple(moves))

    def zone_back(self, user_key: str, name: str) -> None:
        """/undo of a /tz: the zone setting as it was ("" the default); the briefing follows."""
        self._schedule_briefing(self.store.users.set_zone(user_key, name))

    def _row_zone(self, name: str) -> ZoneInfo:
        try:
            return ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):  # a zone the system lost
            return self.default_zone

    # -- the morning briefing --------------------------------------------------------------
    def set_briefing(self, user_key: str, raw: str) -> UserSettings:
        """``/briefing 07:30`` or ``/briefing off``."""
        settings = self.store.users.set_briefing(user_key, parse_briefing_time(raw))
        self._schedule_briefing(settings)
        return settings

    def next_briefing(self, settings: UserSettings) -> datetime | None:
        """When the user's next briefing is due, or None when it is off."""
        if not settings.briefing_at:
            return None
        hour, minute = (int(x) for x in settings.briefing_at.split(":"))
        zone = self.zone(settings.user_key)
        return Recurrence(DAILY, hour, minute).next_after(self.clock(), zone)

    def _schedule_briefing(self, settings: UserSettings) -> None:
        when = self.next_briefing(settings)
        if when is None:
            self.scheduler.cancel(briefing_key(settings.user_key))
        else:
            self.scheduler.schedule_at(when, briefing_key(settings.user_key))

    def schedule_briefings(self) -> int:
        """Schedule every user's next briefing (at start); returns how many."""
        users = [s for s in self.store.users.with_briefing() if self.owns(s.user_key)]
        for settings in users:
            self._schedule_briefing(settings)
        return len(users)

    async def briefing_due(self, user_key: str) -> bool:
        """Send today's briefing once (claim first), then schedule tomorrow's."""
        settings = self.store.users.settings(user_key)
        if not settings.briefing_at:
            return False
        today = self.clock().astimezone(self.zone(user_key)).date()
        sent = False
        if self.on_briefing is not None and self.store.users.claim_briefing(
            user_key, today.isoformat()
        ):
            try:
                await self.on_briefing(user_key, today)
                sent = True
            except Exception:  # one user's briefing failing must not stop the others
                log.exception("the briefing of %s failed", user_key)
        self._schedule_briefing(settings)
        return sent
