"""Every reminder time a person or the model can name gets a time or one sentence, never a crash.

Counts too big for a float ("in" + 400 `一` + "天後"), dates at the end of the calendar seen
from a zone west of UTC ("on 31 Dec 9999 23:59" in New York is year 10000 in UTC), and a
model's ISO time at the calendar's edge: the parser and the service raise only their own
errors, whose sentence the person sees. On the old code these raised OverflowError
("int too large to convert to float") and ValueError ("year 10000 is out of range").
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.reminders.errors import ParseError, ReminderError
from agent.reminders.parse import parse_reminder
from tests.agent.reminders.conftest import ALICE, World

ZONES = ("Pacific/Pago_Pago", "America/New_York", "UTC", "Asia/Taipei", "Pacific/Kiritimati")
NOW = datetime(2026, 3, 4, 2, 0, tzinfo=UTC)

huge = st.one_of(
    st.integers(0, 10**600).map(str),
    st.integers(1, 600).map(lambda n: "一" * n),
    st.integers(1, 200).map(lambda n: "九" * n),
)
units = st.sampled_from(
    (" minutes", " hours", " days", " weeks", "分鐘後", "小時後", "天後", "週後", "個月後")
)
count_phrase = st.tuples(st.sampled_from(("in ", "", "過")), huge, units).map("".join)
edge_date = st.sampled_from(
    (
        "on 31 Dec 9999 23:59",
        "on 31 Dec 9999",
        "9999-12-31 23:59",
        "9999年12月31日 23點59分",
        "12/31 23:59",
        "every year on 31 Dec",
        "每年12月31日",
        "每月31號",
        "on 1 Jan 0001 00:00",
        "0001-01-01",
    )
)


def _parse_or_sentence(phrase: str, now: datetime, zone: str) -> None:
    try:
        parsed = parse_reminder(phrase, now, ZoneInfo(zone))
    except ParseError as exc:
        assert exc.en and exc.zh
    else:
        assert parsed.due >= now  # "in 0 minutes" is now (the service then says it passed)


@settings(max_examples=300, deadline=None)
@given(phrase=count_phrase, zone=st.sampled_from(ZONES))
def test_any_count_of_any_unit_is_a_time_or_one_sentence(phrase: str, zone: str) -> None:
    _parse_or_sentence(f"{phrase} 喝水", NOW, zone)


@settings(max_examples=300, deadline=None)
@given(
    phrase=edge_date,
    zone=st.sampled_from(ZONES),
    now=st.sampled_from(
        (
            NOW,
            datetime(9999, 12, 30, tzinfo=UTC),
            datetime(9999, 12, 31, 12, tzinfo=UTC),
            datetime(9950, 6, 1, tzinfo=UTC),
            datetime(1, 1, 2, tzinfo=UTC),
        )
    ),
)
def test_dates_at_the_calendars_edge_are_a_time_or_one_sentence(
    phrase: str, zone: str, now: datetime
) -> None:
    _parse_or_sentence(f"{phrase} 喝水", now, zone)


@pytest.mark.parametrize(
    "phrase",
    ["一" * 400 + "天後 喝水", "in " + "9" * 400 + " days x", "on 31 Dec 9999 23:59 party"],
)
def test_the_issues_phrases_are_one_sentence_in_new_york(phrase: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_reminder(phrase, NOW, ZoneInfo("America/New_York"))
    assert caught.value.code == "too_far"


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    when=st.one_of(
        st.datetimes(min_value=datetime(9990, 1, 1), max_value=datetime(9999, 12, 31)).map(
            lambda d: d.isoformat()
        ),
        st.sampled_from(
            (
                "9999-12-31T23:59:59",
                "9999-12-31T23:59:59-12:00",
                "0001-01-01T00:00:00+14:00",
                "0001-01-01T00:00",
            )
        ),
    ),
    zone=st.sampled_from(ZONES),
    recurrence=st.sampled_from((None, "daily", "weekly", "monthly", "yearly")),
)
def test_the_models_time_at_the_calendars_edge_is_one_sentence(
    world: World, when: str, zone: str, recurrence: str | None
) -> None:
    proc = world.processes[-1] if world.processes else world.start()
    proc.service.set_zone(ALICE, zone)
    try:
        row = proc.service.propose_iso(ALICE, when, "party", recurrence)
    except ReminderError as exc:
        assert exc.en and exc.zh
    else:  # a rule that began long ago: its next occurrence
        assert recurrence and row.due > world.clock.now
