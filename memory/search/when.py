"""The time a query names ("in May 2023", "last week", "去年聖誕節"), as days on the user's clock.

:func:`named_days` reads the first time expression of a query, English or Chinese, and
resolves it against ``now`` (the conversation's clock): a day, a month, a year, a week or a
Christmas. The search then favours the records and memories dated in those days or in the
``slack`` days after, when people tell of what they did (:func:`fits`; docs/retrieval.md,
"Staged scoring"; bench/RESULTS.md, "Time words in the question").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_CN_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九十")} | {"两": 2, "兩": 2}
_CN_NUM = r"(\d{1,2}|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九])"
_DAY_MARK = r"[日號号]"


@dataclass(frozen=True, slots=True)
class Days:
    """The first and last day (inclusive) a query names."""

    first: date
    last: date


def fits(chunk_date: str, days: Days, slack: int) -> bool:
    """Whether a chunk dated ``chunk_date`` ("2023-05-08" or an ISO timestamp) lies in
    ``days`` or in the ``slack`` days after them."""
    try:
        when = date.fromisoformat(chunk_date[:10])
    except ValueError:
        return False
    return days.first <= when <= days.last + timedelta(days=slack)


def _num(text: str) -> int:
    if text.isdigit():
        return int(text)
    tens, ten, ones = text.partition("十")
    if not ten:
        return _CN_DIGITS[text]
    return 10 * (_CN_DIGITS[tens] if tens else 1) + (_CN_DIGITS[ones] if ones else 0)


def _month(year: int, month: int) -> Days | None:
    if not 1 <= month <= 12:
        return None
    return Days(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _day(year: int, month: int, day: int) -> Days | None:
    try:
        d = date(year, month, day)
    except ValueError:
        return None
    return Days(d, d)


def _latest_year(today: date, month: int, day: int = 1) -> int:
    """The year of the latest (month, day) on or before ``today``: "in June" said in May
    2024 means June 2023."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _week(monday: date) -> Days:
    return Days(monday, monday + timedelta(days=6))


def _christmas(today: date, year: int | None) -> Days:
    year = year if year is not None else _latest_year(today, 12, 24)
    return Days(date(year, 12, 24), date(year, 12, 26))


Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], Days | None]]


def _rules() -> list[Rule]:
    """Most specific first: the first rule that matches and resolves decides."""
    i = re.IGNORECASE

    def mon(m: re.Match[str], g: int) -> int:
        return _MONTHS[m[g].lower()]

    def last_monday(t: date) -> date:
        return t - timedelta(days=t.weekday() + 7)

    def year_of(word: str, t: date) -> int:
        return t.year - {"去": 1, "前": 2, "今": 0}[word]

    return [
        (
            re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
            lambda m, t: _day(int(m[1]), int(m[2]), int(m[3])),
        ),
        (
            re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", i),
            lambda m, t: _day(int(m[3]), mon(m, 1), int(m[2])),
        ),
        (
            re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b", i),
            lambda m, t: _day(int(m[3]), mon(m, 2), int(m[1])),
        ),
        (
            re.compile(rf"(\d{{4}})\s*年\s*{_CN_NUM}\s*月\s*{_CN_NUM}\s*{_DAY_MARK}"),
            lambda m, t: _day(int(m[1]), _num(m[2]), _num(m[3])),
        ),
        (
            re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", i),
            lambda m, t: _month(int(m[2]), mon(m, 1)),
        ),
        (
            re.compile(rf"(\d{{4}})\s*年\s*{_CN_NUM}\s*月"),
            lambda m, t: _month(int(m[1]), _num(m[2])),
        ),
        (
            re.compile(rf"([去前今])年\s*{_CN_NUM}\s*月"),
            lambda m, t: _month(year_of(m[1], t), _num(m[2])),
        ),
        (
            re.compile(r"\b(?:last|this past)\s+(?:christmas|xmas)\b", i),
            lambda m, t: _christmas(t, None),
        ),
        (
            re.compile(r"([去前今])年的?\s*(?:聖誕|圣诞)"),
            lambda m, t: _christmas(t, year_of(m[1], t)),
        ),
        (re.compile(r"\b(?:christmas|xmas)\b|聖誕|圣诞", i), lambda m, t: _christmas(t, None)),
        (
            re.compile(rf"(?<![\d年]){_CN_NUM}\s*月\s*{_CN_NUM}\s*{_DAY_MARK}"),
            lambda m, t: _day(_latest_year(t, _num(m[1]), _num(m[2])), _num(m[1]), _num(m[2])),
        ),
        (
            re.compile(rf"\b(?:in|during|since|of|early|late|mid|last)[\s-]+{_MONTH}(?!\s*\d)", i),
            lambda m, t: _month(_latest_year(t, mon(m, 1)), mon(m, 1)),
        ),
        (
            re.compile(rf"(?<![\d年個个]){_CN_NUM}\s*月"),
            lambda m, t: _month(_latest_year(t, _num(m[1])), _num(m[1])),
        ),
        (
            re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b", i),
            lambda m, t: Days(date(int(m[1]), 1, 1), date(int(m[1]), 12, 31)),
        ),
        (
            re.compile(r"((?:19|20)\d{2})\s*年"),
            lambda m, t: Days(date(int(m[1]), 1, 1), date(int(m[1]), 12, 31)),
        ),
        (
            re.compile(r"\blast\s+year\b|去年", i),
            lambda m, t: Days(date(t.year - 1, 1, 1), date(t.year - 1, 12, 31)),
        ),
        (
            re.compile(r"\blast\s+month\b|上個?月|上个月", i),
            lambda m, t: _month(*((t.year, t.month - 1) if t.month > 1 else (t.year - 1, 12))),
        ),
        (
            re.compile(r"\blast\s+weekend\b|上(?:個|个)?(?:週|周|星期|禮拜|礼拜)末", i),
            lambda m, t: Days(last_monday(t) + timedelta(5), last_monday(t) + timedelta(6)),
        ),
        (
            re.compile(r"\blast\s+week\b|上(?:個|个)?(?:週|周|星期|禮拜|礼拜)", i),
            lambda m, t: _week(last_monday(t)),
        ),
        (
            re.compile(r"\byesterday\b|昨天|昨日|昨晚", i),
            lambda m, t: Days(t - timedelta(1), t - timedelta(1)),
        ),
    ]


_RULES = _rules()


def named_days(query: str, now: datetime) -> Days | None:
    """The days the query's first time expression names, resolved against ``now``; None when
    it names no time."""
    today = now.date()
    for pattern, resolve in _RULES:
        for m in pattern.finditer(query):
            days = resolve(m, today)
            if days is not None:
                return days
    return None
