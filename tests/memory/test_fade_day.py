"""The day an entry fades (is archived) at today's rate: the health formula, solved."""

from __future__ import annotations

from datetime import datetime, timedelta

from memory.access import AccessStat
from memory.config import LifecycleConfig
from memory.lifecycle import entry_health, fade_day
from memory.markdown import Entry

CFG = LifecycleConfig()
CREATED = datetime(2026, 1, 1, 8, 0).astimezone()


def _entry(**kw: object) -> Entry:
    return Entry(id="m", text="t", created_at=CREATED.isoformat(), **kw)  # type: ignore[arg-type]


def test_the_fade_day_is_the_first_whole_day_below_the_archive_line() -> None:
    for weight, uses in [(5, 0), (3, 2), (0, 0), (2, 3)]:
        entry, stat = _entry(user_weight=weight), AccessStat(uses)
        day = fade_day(entry, stat, CFG)
        assert day is not None
        assert entry_health(entry, stat, day, CFG) < CFG.archive_below
        before = day - timedelta(days=1)
        assert entry_health(entry, stat, before, CFG) >= CFG.archive_below


def test_what_never_fades_at_todays_rate() -> None:
    assert fade_day(_entry(user_weight=6), AccessStat(), CFG) is None  # 0.25 * 0.6 = 0.15
    assert fade_day(_entry(user_weight=2), AccessStat(20), CFG) is None  # used enough
    assert fade_day(_entry(is_core=True, user_weight=0), AccessStat(), CFG) is None
    assert fade_day(Entry(id="h", text="typed by hand"), AccessStat(), CFG) is None


def test_a_kept_memory_fades_from_the_day_it_was_kept() -> None:
    kept = CREATED + timedelta(days=30)
    entry = _entry(user_weight=5, refreshed_at=kept.isoformat())
    assert fade_day(entry, AccessStat(), CFG) == kept + timedelta(days=57)
