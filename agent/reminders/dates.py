"""Recurring dates in a memory's text (birthdays, anniversaries) and the "day before" offer.

"媽媽生日是5月3日", "my mother's birthday is 3 May", "結婚紀念日 10/12" each name a month and
day that come back every year; confirming such a memory offers a yearly reminder the day
before. Numeric dates are month/day, as the ``/remind`` parser reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from agent.reminders import lexicon as lx
from agent.reminders.recurrence import MONTHS_EN, YEARLY, Recurrence
from memory.base.edges import strip_edges

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

OFFER_HOUR = 9  # the day-before reminder rings at 09:00 in the user's zone

_OCCASION = re.compile(
    r"生日|生辰|壽辰|寿辰|紀念日|纪念日|週年|周年|忌日|"
    r"\bbirthdays?\b|\bb-?days?\b|\banniversar(?:y|ies)\b",
    re.IGNORECASE,
)
_DATES = (
    re.compile(rf"(?:\d{{4}}\s*年\s*)?(?P<mo>{lx.NUM})\s*月\s*(?P<d>{lx.NUM})\s*(?:日|號|号)?"),
    re.compile(r"(?<![\d/])(?:\d{4}[-/.])?(?P<mo>\d{1,2})[/.-](?P<d>\d{1,2})(?![\d/])"),
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{lx.MON})\b", re.I),
    re.compile(rf"\b(?P<mon>{lx.MON})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b", re.I),
)
_CLAUSE = re.compile(r"[。！？!?；;\n]|[,，](?=\s*\S)")
# A label's edges: leading "and"/"but", trailing punctuation, verbs and particles. Trimmed from
# the ends by code (memory.base.edges), not by "[...]+$" searches, which backtrack over runs.
_LABEL_LEAD = re.compile(r"(?:(?:and|but)\s+)+", re.IGNORECASE)
_LABEL_PUNCT = ":：,，、-"
_LABEL_VERBS = ("is", "was", "falls", "on")  # "is on" goes in two passes
_LABEL_PARTICLES = "是為为在於于的"


@dataclass(frozen=True, slots=True)
class DateOffer:
    """A yearly date found in a memory and the day-before reminder offered for it."""

    month: int
    day: int
    label: str  # "媽媽生日", "my mother's birthday"
    rule: Recurrence  # yearly, on the day before, at OFFER_HOUR
    text: str  # the reminder's text when it rings
    question_zh: str
    question_en: str


def _eve(month: int, day: int) -> tuple[int, int]:
    """The day before ``month/day``; March 1st's eve is Feb 29 (the rule clamps it to 28)."""
    if (month, day) == (3, 1):
        return 2, 29
    before = date(2024, month, day) - timedelta(days=1)  # 2024 is a leap year
    return before.month, before.day


def _month_day(m: re.Match[str]) -> tuple[int, int] | None:
    g = m.groupdict()
    try:  # "十十月" reads as no number (ValueError), like "2月30日" as no date
        month = lx.MONTHS_EN[g["mon"].lower()[:3]] if g.get("mon") else lx.integer(g["mo"])
        day = lx.integer(g["d"])
        date(2024, month, day)
    except ValueError:
        return None
    return month, day


def _label(clause: str, span: tuple[int, int]) -> str:
    text = (clause[: span[0]] + " " + clause[span[1] :]).strip()
    text = " ".join(text.split())
    for _ in range(3):
        lead = _LABEL_LEAD.match(text)
        text = strip_edges(text[lead.end() if lead else 0 :], "", _LABEL_PUNCT)
        words = text.rsplit(" ", 1)
        if len(words) == 2 and words[1].lower() in _LABEL_VERBS:
            text = words[0]
        text = text.rstrip(_LABEL_PARTICLES).strip()
    return text


def find_recurring_date(text: str) -> DateOffer | None:
    """The first clause naming an occasion and a date, as a day-before offer; else None."""
    for clause in _CLAUSE.split(text.translate(lx.WIDE)):
        if not _OCCASION.search(clause):
            continue
        for pattern in _DATES:
            m = pattern.search(clause)
            found = _month_day(m) if m else None
            if m is None or found is None:
                continue
            month, day = found
            label = _label(clause, m.span()) or _OCCASION.search(clause).group(0)  # type: ignore[union-attr]
            eve_month, eve_day = _eve(month, day)
            rule = Recurrence(YEARLY, OFFER_HOUR, 0, month=eve_month, day=eve_day)
            on_en = f"{day} {MONTHS_EN[month - 1]}"
            return DateOffer(
                month=month,
                day=day,
                label=label,
                rule=rule,
                # One language, the label's own: "明天是媽媽生日", "Tomorrow: my mother's ..."
                text=(
                    f"明天是{label}（{month}月{day}日）"
                    if _HAN.search(label)
                    else f"Tomorrow: {label} ({on_en})"
                ),
                question_zh=f"要在每年 {month} 月 {day} 日的前一天 09:00 提醒你「{label}」嗎？",
                question_en=f"Remind you of “{label}” the day before {on_en}, yearly at 09:00?",
            )
    return None
