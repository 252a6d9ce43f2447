"""The deterministic ``/remind`` parser: a Chinese or English phrase -> due time, text, rule.

Rules, in the order they apply (``now`` and every result are in the user's zone):

* "in 10 minutes" / "10分鐘後" is exact elapsed time and cannot be combined with a clock time.
* A recurrence ("每週一", "every day") takes the clock time (09:00 when none is named) and
  starts at its first occurrence after ``now`` (or on the day named: "明天開始每天八點").
* A day ("明天", "next Monday", "週五", "5月3日", "5/3", "on 3 May") and a time ("九點半",
  "9:15", "5pm", "下午三點", "noon") are combined; a day alone means 09:00, a period alone its
  usual hour (早上 09:00, 中午 12:00, 下午 15:00, 晚上 20:00, 凌晨 06:00).
* Numeric dates are month/day ("5/3" is 3 May), as written in Taiwan and the US.
* An hour of 1-12 with no am/pm or 早上/下午 is read as the next such hour: on a named day,
  7-11 in the morning, 12 at noon, 1-6 in the afternoon; today, whichever of h and h+12 comes
  next. "08:00" (a leading zero) and hours over 12 are on the 24-hour clock.
* Times already past roll forward: today to tomorrow, a weekday to next week, a date without a
  year to next year. A past date with a year is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from agent.reminders import lexicon as lx
from agent.reminders.errors import parse_error as _error
from agent.reminders.recurrence import DAILY, MONTHLY, WEEKLY, YEARLY, Recurrence, at_wall
from agent.reminders.store import INSTANT, WALL
from agent.reminders.texts import understood_en, understood_zh
from memory.base.edges import strip_edges

PERIOD_DEFAULT = {"dawn": 6, "morning": 9, "noon": 12, "afternoon": 15, "evening": 20}
DEFAULT_HOUR = 9
MAX_TEXT = 500
# The time parser reads at most this much of a phrase (whitespace runs counted as one): a
# longer one cannot leave a text of MAX_TEXT, and the patterns never see more than this.
MAX_PHRASE = MAX_TEXT + 100
MAX_AHEAD = timedelta(days=36525)  # 100 years: beyond, dates overflow before they matter
_STARTING = re.compile(r"^(?:開始|开始|起|starting|from)\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedReminder:
    """What a phrase asks for, and the sentence that says how it was understood."""

    due: datetime  # aware, in the user's zone
    text: str
    recurrence: Recurrence | None
    understood_zh: str
    understood_en: str
    # INSTANT for a span of time ("in 30 minutes", "in 3 days"): a change of zone keeps the
    # moment; WALL for a clock time ("at 9:00", "tomorrow", "every day at 7").
    anchor: str = WALL


@dataclass(slots=True)
class _Clock:
    hour: int
    minute: int
    fixed: bool  # am/pm, a period, 24-hour form: no guessing
    named: str = ""  # noon / midnight


@dataclass(slots=True)
class _Found:
    """What the phrase named, before it is turned into a time."""

    delta: timedelta | None = None
    rel_days: int | None = None
    rec: str | None = None
    rec_weekday: int = 0
    rec_day: int = 0
    date: tuple[int | None, int | None, int] | None = None
    offset: int | None = None
    weekday: tuple[int, bool] | None = None  # (weekday, of next week)
    period: str | None = None
    clock: _Clock | None = None
    spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def names_day(self) -> bool:
        return self.date is not None or self.offset is not None or self.weekday is not None

    @property
    def span_only(self) -> bool:
        """A span of time and nothing else ("in 30 minutes", "in 3 days"): a moment."""
        if self.delta is not None:
            return True
        plain = self.clock is None and self.period is None and self.rec is None
        return self.rel_days is not None and plain and not self.names_day


# -- finding the parts -------------------------------------------------------------------------
def _take(work: str, patterns: tuple[re.Pattern[str], ...]) -> re.Match[str] | None:
    best: re.Match[str] | None = None
    for pattern in patterns:
        m = pattern.search(work)
        if m and m.group(0).strip() and (best is None or m.start() < best.start()):
            best = m
    return best


def _weekday(raw: str) -> int:
    return lx.WD_ZH[raw] if raw in lx.WD_ZH else lx.WD_EN[raw.lower()[:3]]


def _read(kind: str, m: re.Match[str], found: _Found) -> None:
    g = m.groupdict()
    word = m.group(0).strip().lower()
    if kind == "relative":
        n = lx.number(g["n"]) + (0.5 if g.get("half") or g.get("half2") else 0.0)
        unit = g["unit"].lower()
        if n > MAX_AHEAD.total_seconds() / 60:  # "in 99999999999 minutes": no datetime holds it
            raise _error("too_far")
        if unit[0] in "天dw週周星禮" and unit not in ("min", "mins"):
            found.rel_days = round(n * (7 if unit[0] in "w週周星禮" else 1))
        else:
            hours = unit[0] in "小鐘钟個h"
            found.delta = timedelta(hours=n) if hours else timedelta(minutes=n)
    elif kind == "recurrence":
        if g.get("wd"):
            found.rec, found.rec_weekday = WEEKLY, _weekday(g["wd"])
        elif g.get("d"):
            found.rec, found.rec_day = MONTHLY, lx.integer(g["d"])
        elif "年" in word or "year" in word or "annual" in word:
            found.rec = YEARLY
        else:
            found.rec = DAILY
            if g.get("period"):
                found.period = lx.PERIOD_WORDS[g["period"].lower()]
    elif kind == "date":
        month = lx.MONTHS_EN[g["mon"].lower()[:3]] if g.get("mon") else None
        if g.get("mo"):
            month = lx.integer(g["mo"])
        year = int(g["y"]) if g.get("y") else None
        found.date = (year, month, lx.integer(g["d"]))
    elif kind == "day":
        if g.get("wd"):
            found.weekday = (_weekday(g["wd"]), bool(g.get("next")))
        elif g.get("period"):
            found.offset, found.period = 0, lx.PERIOD_WORDS[g["period"].lower()]
        elif "after" in word:
            found.offset = 2
        else:
            found.offset, period = lx.DAY_WORDS[word]
            found.period = found.period or period
    elif kind == "period":
        found.period = lx.PERIOD_WORDS[(g.get("period") or word).lower()]
    else:
        found.clock = _read_clock(g)


def _read_clock(g: dict[str, Any]) -> _Clock:
    if g.get("named"):
        named = g["named"].lower()
        return _Clock(0 if named == "midnight" else 12, 0, True, named)
    raw_h = g["h"]
    hour = lx.integer(raw_h)
    minute = 30 if g.get("half") else 15 * lx.integer(g["q"]) if g.get("q") else 0
    if g.get("m"):
        minute = lx.integer(g["m"])
    ap = (g.get("ap") or "").lower()
    if ap:
        if not 1 <= hour <= 12:
            raise _error("bad_time", what=f"{raw_h}{ap}")
        return _Clock(hour % 12 + (12 if ap.startswith("p") else 0), minute, True)
    fixed = hour > 12 or hour == 0 or (raw_h.startswith("0") and len(raw_h) == 2)
    return _Clock(hour, minute, fixed)


def find_parts(phrase: str) -> tuple[_Found, str]:
    """Every time part the phrase names, and what is left of it (the reminder text)."""
    work = phrase.translate(lx.WIDE)
    found = _Found()
    for kind, patterns in lx.CATEGORIES:
        m = _take(work, patterns)
        if m is None:
            continue
        try:
            _read(kind, m, found)
        except (ValueError, OverflowError):  # "十十分鐘後": numerals that make no number
            raise _error("bad_number", what=m.group(0).strip()) from None
        # Blank the span (same length) so later categories and the text never see it again.
        work = work[: m.start()] + " " * (m.end() - m.start()) + work[m.end() :]
        found.spans.append(m.span())
    return found, _text_of(work)


def _text_of(work: str) -> str:
    text = lx.FILLER.sub(" ", work)
    text = lx.CJK_GAP.sub("", " ".join(text.split()))
    for _ in range(3):  # "to", then ":" or "的" that the removal left at the edges
        text = lx.LEAD_WORDS.sub("", strip_edges(text, lx.EDGE)).strip()
    return text


# -- turning the parts into a time ---------------------------------------------------------
def _guess_hour(hour: int) -> int:
    """A bare 1-12 on a named day: 7-11 morning, 12 noon, 1-6 afternoon."""
    return hour + 12 if 1 <= hour <= 6 else hour


def _apply_period(clock: _Clock, period: str) -> tuple[int, int]:
    h = clock.hour
    if period in ("afternoon", "evening") and h < 12:
        h += 12
    elif period == "evening" and h == 12:
        h = 24  # 晚上十二點: midnight at the end of the day
    elif period == "noon" and 1 <= h <= 5:
        h += 12
    elif period in ("dawn", "morning") and h == 12:
        h = 0 if period == "dawn" else 12
    return h, clock.minute


def _hour_minute(found: _Found, on_named_day: bool) -> tuple[int, int, list[int]]:
    """(hour, minute, other hours to try today); hour 24 is the next day's 00:00."""
    clock, period = found.clock, found.period
    if clock is None:
        hour = PERIOD_DEFAULT[period] if period else DEFAULT_HOUR
        return hour, 0, []
    if clock.named == "midnight":
        return 24, 0, []
    if period and not clock.fixed:
        h, m = _apply_period(clock, period)
        return h, m, []
    if clock.fixed or clock.named:
        return clock.hour, clock.minute, []
    if clock.hour == 12:
        return 12, clock.minute, []
    if on_named_day:
        return _guess_hour(clock.hour), clock.minute, []
    return clock.hour, clock.minute, [clock.hour + 12]


def _check_time(hour: int, minute: int) -> None:
    if not (0 <= hour <= 24 and 0 <= minute <= 59) or (hour == 24 and minute):
        raise _error("bad_time", what=f"{hour}:{minute:02d}")


def _wall(day: date, hour: int, minute: int, zone: ZoneInfo) -> datetime:
    if hour == 24:
        return at_wall(day + timedelta(days=1), 0, minute, zone)
    return at_wall(day, hour, minute, zone)


def _calendar_date(year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError:
        raise _error("bad_date", what=f"{year}-{month:02d}-{day:02d}") from None


def _named_date(found: _Found, today: date) -> tuple[date, str]:
    """The date a phrase names and how it rolls when past ("", "week", "year", "month")."""
    if found.date is not None:
        year, month, day = found.date
        if month is None:  # "15號": this month's day 15
            return _calendar_date(today.year, today.month, day), "month"
        if year is not None:
            return _calendar_date(year, month, day), ""
        if (month, day) == (2, 29):
            return _next_feb_29(today), ""
        return _calendar_date(today.year, month, day), "year"
    if found.weekday is not None:
        weekday, next_week = found.weekday
        if next_week:
            monday = today + timedelta(days=7 - today.weekday())
            return monday + timedelta(days=weekday), ""
        return today + timedelta(days=(weekday - today.weekday()) % 7), "week"
    return today + timedelta(days=found.offset or 0), "day"


def _next_feb_29(today: date) -> date:
    year = today.year
    while True:
        try:
            candidate = date(year, 2, 29)
        except ValueError:
            year += 1
            continue
        if candidate >= today:
            return candidate
        year += 1


def _roll(day: date, how: str) -> date:
    if how == "week":
        return day + timedelta(days=7)
    if how == "year":
        return _calendar_date(day.year + 1, day.month, day.day)
    if how == "month":
        year, month = (day.year + 1, 1) if day.month == 12 else (day.year, day.month + 1)
        return _calendar_date(year, month, day.day)
    return day + timedelta(days=1)


def _resolve(found: _Found, now: datetime, zone: ZoneInfo) -> tuple[datetime, Recurrence | None]:
    local = now.astimezone(zone)
    today = local.date()
    named = found.names_day
    if found.delta is not None:
        if named or found.clock or found.period or found.rec or found.rel_days is not None:
            raise _error("conflict")
        return (now + found.delta).astimezone(zone), None
    if found.rel_days is not None and (named or found.rec):
        raise _error("conflict")
    if found.date is not None and (found.offset is not None or found.weekday is not None):
        raise _error("conflict")
    if found.rec is not None:
        return _resolve_rule(found, now, zone)
    if found.rel_days is not None:
        day = today + timedelta(days=found.rel_days)
        if found.clock is None and found.period is None:
            return _wall(day, local.hour, local.minute, zone), None
        hour, minute, _ = _hour_minute(found, True)
        _check_time(hour, minute)
        return _wall(day, hour, minute, zone), None
    if not named and found.clock is None and found.period is None:
        raise _error("no_time")
    day, roll = _named_date(found, today)
    explicit_day = named and not (found.offset == 0 and found.date is None)
    hour, minute, others = _hour_minute(found, explicit_day)
    _check_time(hour, minute)
    due = _wall(day, hour, minute, zone)
    for other in others:
        if due > now:
            break
        due = _wall(day, other, minute, zone)
    if due > now:
        return due, None
    if roll == "day" and others:  # a bare hour, both halves of today gone: tomorrow's guess
        hour = _guess_hour(hour)
    if not roll:
        raise _error("past", what=f"{due:%Y-%m-%d %H:%M}")
    while due <= now:
        day = _roll(day, roll)
        due = _wall(day, hour, minute, zone)
    return due, None


def _resolve_rule(found: _Found, now: datetime, zone: ZoneInfo) -> tuple[datetime, Recurrence]:
    hour, minute, _ = _hour_minute(found, True)
    _check_time(hour, minute)
    if hour == 24:
        hour = 0
    start: date | None = None
    today = now.astimezone(zone).date()
    if found.rec == YEARLY:
        _, month, day = found.date or (None, None, 0)
        if month is None:
            raise _error("no_time")
        _calendar_date(2024, month, day)  # a leap year: 2/29 is a date, 2/30 is not
        rule = Recurrence(YEARLY, hour, minute, month=month, day=day)
    else:
        if found.rec == WEEKLY:
            rule = Recurrence(WEEKLY, hour, minute, weekday=found.rec_weekday)
        elif found.rec == MONTHLY:
            if not 1 <= found.rec_day <= 31:
                raise _error("bad_date", what=f"{found.rec_day}")
            rule = Recurrence(MONTHLY, hour, minute, day=found.rec_day)
        else:
            rule = Recurrence(DAILY, hour, minute)
        if found.names_day:  # "明天開始每天八點": the first occurrence on or after that day
            start = _named_date(found, today)[0]
    return rule.next_after(now, zone, start), rule


def parse_reminder(phrase: str, now: datetime, zone: ZoneInfo) -> ParsedReminder:
    """Parse a ``/remind`` phrase as of ``now`` in ``zone``; :class:`ParseError` if it can't."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    # Arithmetic and comparisons in UTC: within one ZoneInfo Python compares wall clocks.
    now = now.astimezone(UTC)
    if len(phrase) > 4 * MAX_PHRASE:  # refused before even a split: 100 KB costs nothing
        raise _error("too_long")
    phrase = " ".join(phrase.split())  # one space per run: \s* in a pattern meets no long run
    if len(phrase) > MAX_PHRASE:
        raise _error("too_long")
    found, text = find_parts(phrase)
    if not found.spans:
        raise _error("no_time")
    try:
        due, rule = _resolve(found, now, zone)
    except (OverflowError, ValueError):  # past the calendar: 9999-12-31 23:59 in New York
        raise _error("too_far") from None
    if due - now > MAX_AHEAD:
        raise _error("too_far")
    if rule is not None and found.names_day:  # "明天開始每天八點跑步": 開始 is not the text
        text = _STARTING.sub("", text).strip()
    if not text:
        raise _error("no_text")
    if len(text) > MAX_TEXT:
        raise _error("too_long")
    return ParsedReminder(
        due=due,
        text=text,
        recurrence=rule,
        understood_zh=understood_zh(due, text, rule, zone.key),
        understood_en=understood_en(due, text, rule, zone.key),
        anchor=INSTANT if found.span_only else WALL,
    )
