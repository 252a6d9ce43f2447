"""Sentences about reminders in Chinese and English: times, what was understood, the alert."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.reminders.recurrence import MONTHS_EN, WEEKDAYS_EN, WEEKDAYS_ZH, Recurrence
from agent.texts import say


def when_zh(when: datetime) -> str:
    """``2026-03-02（週一）09:00`` in ``when``'s own zone."""
    return f"{when:%Y-%m-%d}（週{WEEKDAYS_ZH[when.weekday()]}）{when:%H:%M}"


def when_en(when: datetime) -> str:
    """``Mon 2 Mar 2026 09:00`` in ``when``'s own zone."""
    return (
        f"{WEEKDAYS_EN[when.weekday()][:3]} {when.day} {MONTHS_EN[when.month - 1][:3]} "
        f"{when.year} {when:%H:%M}"
    )


def span_zh_en(length: timedelta) -> tuple[str, str]:
    """``10 分鐘`` / ``10 min`` (one decimal at most); under a minute in whole seconds."""
    seconds = length.total_seconds()
    if seconds < 60:
        whole = max(1, round(seconds))
        return f"{whole} 秒", f"{whole} s"
    minutes = f"{round(seconds / 60, 1):g}"
    return f"{minutes} 分鐘", f"{minutes} min"


def understood_zh(due: datetime, text: str, rule: Recurrence | None, zone: str) -> str:
    """我會在 2026-03-02（週一）09:00（Asia/Taipei）提醒你：打電話給媽媽."""
    repeat = f"，之後{rule.describe_zh()}重複" if rule else ""
    return f"我會在 {when_zh(due)}（{zone}）提醒你：{text}{repeat}"


def understood_en(due: datetime, text: str, rule: Recurrence | None, zone: str) -> str:
    """I'll remind you on Mon 2 Mar 2026 09:00 (Asia/Taipei): call mom."""
    repeat = f", then {rule.describe_en()}" if rule else ""
    return f"I'll remind you on {when_en(due)} ({zone}): {text}{repeat}"


def alert_text(text: str, due_local: datetime, late: bool, lang: str = "en") -> str:
    """The message a reminder sends, in ``lang`` ("zh"; anything else is English); a late one
    says when it was due."""
    if late:
        when = {"when_zh": when_zh(due_local), "when_en": when_en(due_local)}
        return say("reminder_alert_late", lang, text=text, **when)
    return say("reminder_alert", lang, text=text)


def when_text(when: datetime, lang: str) -> str:
    """``when`` as ``lang`` writes a reminder's time (:func:`when_zh` or :func:`when_en`)."""
    return say("reminder_when", lang, when_zh=when_zh(when), when_en=when_en(when))


# The statuses a /reminders line marks (catalogue key ``reminder_mark_<status>``).
_MARKED = frozenset({"proposed", "unknown", "firing"})


def list_line(
    reminder_id: int,
    next_local: datetime,
    text: str,
    rule: Recurrence | None,
    status: str,
    lang: str = "zh",
    zone_name: str = "",
) -> str:
    """One ``/reminders`` line in ``lang``: id, next time and its zone, text, its rule, and a
    mark when not plain."""
    zone = f" ({zone_name})" if zone_name else ""
    repeat = (
        say("reminder_list_repeat", lang, rule_zh=rule.describe_zh(), rule_en=rule.describe_en())
        if rule
        else ""
    )
    mark = say(f"reminder_mark_{status}", lang) if status in _MARKED else ""
    return f"#{reminder_id} {when_text(next_local, lang)}{zone} {text}{repeat}{mark}"
