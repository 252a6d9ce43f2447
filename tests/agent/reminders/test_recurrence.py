"""Recurrence rules: next occurrences in Taipei and across DST changes in Berlin and New York."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.reminders.recurrence import DAILY, MONTHLY, WEEKLY, YEARLY, Recurrence, rule_for

TPE = ZoneInfo("Asia/Taipei")
BERLIN = ZoneInfo("Europe/Berlin")
NY = ZoneInfo("America/New_York")
MONDAY_8 = Recurrence(WEEKLY, 8, 0, weekday=0)


def _chain(rule: Recurrence, start: datetime, zone: ZoneInfo, n: int) -> list[datetime]:
    out, at = [], start
    for _ in range(n):
        at = rule.next_after(at, zone)
        out.append(at)
    return out


def test_every_monday_8_in_taipei() -> None:
    start = datetime(2026, 3, 4, 10, 0, tzinfo=TPE)  # Wednesday
    got = _chain(MONDAY_8, start, TPE, 3)
    assert [f"{d:%Y-%m-%d %a %H:%M}" for d in got] == [
        "2026-03-09 Mon 08:00",
        "2026-03-16 Mon 08:00",
        "2026-03-23 Mon 08:00",
    ]
    assert {d.astimezone(UTC).hour for d in got} == {0}  # no DST in Taipei


@pytest.mark.parametrize(
    ("zone", "start", "utc_hours"),
    [
        # Berlin springs forward on Sunday 29 March 2026: 08:00 CET = 07 UTC, CEST = 06 UTC
        (BERLIN, datetime(2026, 3, 17, 12, 0), [7, 6, 6]),
        # and falls back on Sunday 25 October 2026
        (BERLIN, datetime(2026, 10, 13, 12, 0), [6, 7, 7]),
        # New York springs forward on Sunday 8 March 2026: EST = 13 UTC, EDT = 12 UTC
        (NY, datetime(2026, 2, 26, 12, 0), [13, 12, 12]),
        (NY, datetime(2026, 10, 20, 12, 0), [12, 13, 13]),  # falls back on 1 November
    ],
)
def test_the_wall_clock_stays_8_across_a_dst_change(
    zone: ZoneInfo, start: datetime, utc_hours: list[int]
) -> None:
    got = _chain(MONDAY_8, start.replace(tzinfo=zone), zone, 3)
    assert [(d.weekday(), d.hour, d.minute) for d in got] == [(0, 8, 0)] * 3
    assert [d.astimezone(UTC).hour for d in got] == utc_hours


def test_a_wall_time_in_the_spring_gap_fires_at_the_instant_it_maps_to() -> None:
    rule = Recurrence(DAILY, 2, 30)
    got = rule.next_after(datetime(2026, 3, 7, 12, 0, tzinfo=NY), NY)
    assert f"{got:%m-%d %H:%M}" == "03-08 03:30"
    assert f"{rule.next_after(got, NY):%m-%d %H:%M}" == "03-09 02:30"


def test_an_ambiguous_autumn_time_fires_once() -> None:
    rule = Recurrence(DAILY, 1, 30)  # 01:30 happens twice in New York on 1 November
    first = rule.next_after(datetime(2026, 10, 31, 12, 0, tzinfo=NY), NY)
    second = rule.next_after(first, NY)
    assert f"{first:%m-%d %H:%M %z}" == "11-01 01:30 -0400"
    assert f"{second:%m-%d %H:%M %z}" == "11-02 01:30 -0500"


def test_monthly_on_the_31st_uses_short_months_last_day() -> None:
    rule = Recurrence(MONTHLY, 9, 0, day=31)
    got = _chain(rule, datetime(2026, 1, 31, 10, 0, tzinfo=TPE), TPE, 3)
    assert [f"{d:%m-%d}" for d in got] == ["02-28", "03-31", "04-30"]


def test_yearly_feb_29_clamps_in_common_years() -> None:
    rule = Recurrence(YEARLY, 9, 0, month=2, day=29)
    got = _chain(rule, datetime(2026, 1, 1, tzinfo=TPE), TPE, 3)
    assert [f"{d:%Y-%m-%d}" for d in got] == ["2026-02-28", "2027-02-28", "2028-02-29"]


def test_start_date_delays_the_first_occurrence() -> None:
    rule = Recurrence(DAILY, 8, 0)
    now = datetime(2026, 3, 4, 7, 0, tzinfo=TPE)
    assert f"{rule.next_after(now, TPE):%m-%d}" == "03-04"
    assert f"{rule.next_after(now, TPE, now.date().replace(day=6)):%m-%d}" == "03-06"


def test_rule_for_repeats_the_given_time() -> None:
    due = datetime(2026, 5, 3, 7, 45, tzinfo=TPE)  # a Sunday
    assert rule_for("weekly", due) == Recurrence(WEEKLY, 7, 45, weekday=6)
    assert rule_for("monthly", due).encode() == "monthly 3 07:45"
    assert rule_for("yearly", due).encode() == "yearly 5-3 07:45"
    with pytest.raises(ValueError):
        rule_for("hourly", due)


@pytest.mark.parametrize("raw", ["", "weekly 08:00", "daily 1 08:00", "monthly 40 08:00", "x"])
def test_decode_refuses_anything_else(raw: str) -> None:
    with pytest.raises(ValueError):
        Recurrence.decode(raw)


rules = st.one_of(
    st.builds(Recurrence, st.just(DAILY), st.integers(0, 23), st.integers(0, 59)),
    st.builds(
        Recurrence,
        st.just(WEEKLY),
        st.integers(0, 23),
        st.integers(0, 59),
        weekday=st.integers(0, 6),
    ),
    st.builds(
        Recurrence,
        st.just(MONTHLY),
        st.integers(0, 23),
        st.integers(0, 59),
        day=st.integers(1, 31),
    ),
    st.builds(
        Recurrence,
        st.just(YEARLY),
        st.integers(0, 23),
        st.integers(0, 59),
        month=st.integers(1, 12),
        day=st.integers(1, 28),
    ),
)


@given(rules, st.datetimes(datetime(2000, 1, 1), datetime(2090, 1, 1), timezones=st.just(BERLIN)))
def test_round_trip_and_next_is_strictly_later_on_the_rules_wall_clock(
    rule: Recurrence, after: datetime
) -> None:
    assert Recurrence.decode(rule.encode()) == rule
    nxt = rule.next_after(after, BERLIN)
    assert nxt.astimezone(UTC) > after.astimezone(UTC)
    if (nxt.hour, nxt.minute) != (rule.hour, rule.minute):
        # only a wall time inside the spring-forward gap may move, and only by that hour
        assert (nxt.month, nxt.hour) == (3, rule.hour + 1)
