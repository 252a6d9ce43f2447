"""What a change of zone (``/tz``) did to each reminder, and the one reply that says so.

The rule: a reminder set as a span of time ("in 30 minutes") is a moment, and a change of zone
never moves it; one set for a clock time ("at 9:00", "every day at 7") keeps that clock time in
the new zone. When that clock time has already passed there, a one-off rings now and a
recurring one goes to its next occurrence, and the reply names each of them: it says what was
done, reminder by reminder where it is not the plain "09:00 stays 09:00".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from zoneinfo import ZoneInfo

from agent.reminders.recurrence import Recurrence
from agent.reminders.store import Reminder
from agent.reminders.texts import when_en, when_zh

NAMED_MAX = 5  # reminders named per kind of move; the rest are counted
QUOTE_MAX = 40  # characters of a reminder's text quoted in the reply


class Moved(StrEnum):
    """What a change of zone did to one scheduled reminder."""

    KEPT = "kept"  # a moment ("in 30 minutes", or already due): same instant
    CLOCK = "clock"  # a clock time: the same clock time in the new zone
    NOW = "now"  # a one-off whose clock time already passed in the new zone: rings now
    NEXT = "next"  # a recurring one whose awaited occurrence passed there: the next one


@dataclass(frozen=True, slots=True)
class ZoneMove:
    """One reminder after the change, how it moved, and the clock time it was waiting for."""

    reminder: Reminder  # as stored after the change (its zone, its new due time)
    how: Moved
    was: datetime  # the time it was waiting for, on its old zone's clock (the digits set)


@dataclass(frozen=True, slots=True)
class ZoneChange:
    """The new zone and what happened to each scheduled reminder of the person."""

    zone: ZoneInfo
    moves: tuple[ZoneMove, ...] = ()

    def of(self, how: Moved) -> list[ZoneMove]:
        """The moves of one kind, soonest first."""
        return sorted((m for m in self.moves if m.how == how), key=lambda m: m.reminder.due)


def _quoted(text: str, zh: bool) -> str:
    short = text if len(text) <= QUOTE_MAX else text[: QUOTE_MAX - 1] + "…"
    return f"「{short}」" if zh else f"“{short}”"


def _when(when: datetime, zh: bool) -> str:
    return when_zh(when) if zh else when_en(when)


def _clock_line(moves: list[ZoneMove], name: str, zh: bool) -> str:
    n = len(moves)
    if zh:
        return f"你的 {n} 個提醒維持原本的鐘點，改在 {name} 的時間響（09:00 仍是 09:00）。"
    return f" Your {n} reminder(s) keep their clock times, now in {name} (09:00 stays 09:00)."


def _kept_line(moves: list[ZoneMove], zone: ZoneInfo, zh: bool) -> str:
    at = "在 " if zh else " at "
    named = ("、" if zh else ", ").join(
        f"{_quoted(m.reminder.text, zh)}{at}{_when(m.reminder.due.astimezone(zone), zh)}"
        for m in moves[:NAMED_MAX]
    )
    rest = len(moves) - NAMED_MAX
    if zh:
        more = f"（另有 {rest} 個）" if rest > 0 else ""
        return f"{len(moves)} 個提醒的時刻不變（以「多久之後」設定，或已到期）：{named}{more}。"
    more = f" (and {rest} more)" if rest > 0 else ""
    return f" {len(moves)} keep their moment (set “in …”, or already due): {named}{more}."


def _now_line(m: ZoneMove, name: str, zh: bool) -> str:
    said, was = _quoted(m.reminder.text, zh), _when(m.was, zh)
    if zh:
        return f"{said}原定 {was}，在 {name} 已經過了：現在就響。"
    return f" {said} was set for {was}, which has already passed in {name}: it rings now."


def _next_line(m: ZoneMove, zone: ZoneInfo, zh: bool) -> str:
    rule = Recurrence.decode(m.reminder.recurrence)
    said, was = _quoted(m.reminder.text, zh), _when(m.was, zh)
    nxt = _when(m.reminder.due.astimezone(zone), zh)
    if zh:
        return f"{said}（{rule.describe_zh()}）：{was} 在 {zone.key} 已經過了；下次在 {nxt}。"
    return (
        f" {said} ({rule.describe_en()}): {was} has already passed in {zone.key}; "
        f"it rings next on {nxt}."
    )


def _rest_line(rest: int, how: Moved, zh: bool) -> str:
    if how == Moved.NOW:
        return f"另有 {rest} 個提醒也已過時，現在就響。" if zh else f" {rest} more: they ring now."
    if zh:
        return f"另有 {rest} 個重複提醒改在下一次響。"
    return f" {rest} more recurring reminder(s) ring at their next occurrence."


def zone_change_text(change: ZoneChange, lang: str) -> str:
    """The ``/tz`` reply in ``lang`` ("zh"; anything else is English): the zone, then what
    happened to the reminders, each one named where it is not "09:00 stays 09:00"."""
    zone, zh = change.zone, lang == "zh"
    out = [f"🌐 時區已設為 {zone.key}。" if zh else f"🌐 Time zone set to {zone.key}."]
    if clock := change.of(Moved.CLOCK):
        out.append(_clock_line(clock, zone.key, zh))
    if kept := change.of(Moved.KEPT):
        out.append(_kept_line(kept, zone, zh))
    for how in (Moved.NOW, Moved.NEXT):
        moves = change.of(how)
        for m in moves[:NAMED_MAX]:
            out.append(_now_line(m, zone.key, zh) if how == Moved.NOW else _next_line(m, zone, zh))
        if len(moves) > NAMED_MAX:
            out.append(_rest_line(len(moves) - NAMED_MAX, how, zh))
    return "".join(out)
