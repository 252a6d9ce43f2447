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
from agent.reminders.texts import when_text
from agent.texts import say

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


def _quoted(text: str, lang: str) -> str:
    short = text if len(text) <= QUOTE_MAX else text[: QUOTE_MAX - 1] + "…"
    return say("tz_quoted", lang, text=short)


def _clock_line(moves: list[ZoneMove], name: str, lang: str) -> str:
    return say("tz_clock", lang, n=len(moves), name=name)


def _kept_line(moves: list[ZoneMove], zone: ZoneInfo, lang: str) -> str:
    named = say("list_sep", lang).join(
        say(
            "tz_kept_one",
            lang,
            said=_quoted(m.reminder.text, lang),
            when=when_text(m.reminder.due.astimezone(zone), lang),
        )
        for m in moves[:NAMED_MAX]
    )
    rest = len(moves) - NAMED_MAX
    more = say("tz_kept_more", lang, rest=rest) if rest > 0 else ""
    return say("tz_kept", lang, n=len(moves), named=named, more=more)


def _now_line(m: ZoneMove, name: str, lang: str) -> str:
    said, was = _quoted(m.reminder.text, lang), when_text(m.was, lang)
    return say("tz_now", lang, said=said, was=was, name=name)


def _next_line(m: ZoneMove, zone: ZoneInfo, lang: str) -> str:
    rule = Recurrence.decode(m.reminder.recurrence)
    said, was = _quoted(m.reminder.text, lang), when_text(m.was, lang)
    nxt = when_text(m.reminder.due.astimezone(zone), lang)
    rules = {"rule_zh": rule.describe_zh(), "rule_en": rule.describe_en()}
    return say("tz_next", lang, said=said, was=was, name=zone.key, next=nxt, **rules)


def _rest_line(rest: int, how: Moved, lang: str) -> str:
    return say("tz_rest_now" if how == Moved.NOW else "tz_rest_next", lang, rest=rest)


def zone_change_text(change: ZoneChange, lang: str) -> str:
    """The ``/tz`` reply in ``lang`` ("zh"; anything else is English): the zone, then what
    happened to the reminders, each one named where it is not "09:00 stays 09:00"."""
    zone = change.zone
    out = [say("tz_set", lang, zone=zone.key)]
    if clock := change.of(Moved.CLOCK):
        out.append(_clock_line(clock, zone.key, lang))
    if kept := change.of(Moved.KEPT):
        out.append(_kept_line(kept, zone, lang))
    for how in (Moved.NOW, Moved.NEXT):
        moves = change.of(how)
        for m in moves[:NAMED_MAX]:
            line = _now_line(m, zone.key, lang) if how == Moved.NOW else _next_line(m, zone, lang)
            out.append(line)
        if len(moves) > NAMED_MAX:
            out.append(_rest_line(len(moves) - NAMED_MAX, how, lang))
    return "".join(out)
