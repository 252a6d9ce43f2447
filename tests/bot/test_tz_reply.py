"""``/tz`` through the front desk both front ends share: the reply says what was done.

Reminders are typed with ``/remind`` (set at once) and the zone changed with ``/tz``; then the
rows in pcai.db are read. The reply must match them: each reminder that did not simply keep its
clock time ("09:00 stays 09:00") is named with the time it now rings. On the old code the reply
said every reminder kept its clock time, while "in 30 minutes" moved by the zones' difference
and a reminder whose clock time had passed in the new zone stayed in the old one.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.reminders import store as rs
from agent.reminders.desk import ReminderDesk
from agent.reminders.recurrence import Recurrence, at_wall
from agent.reminders.store import Reminder
from agent.reminders.texts import when_en, when_zh
from bot.app import Services
from bot.frontdesk.reminder_desk import reminder_desk_for

_users = itertools.count(1)
ZONES = ("Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu", "Europe/Berlin", "UTC")


class Clock:
    """The time the test sets (the reminder service reads the time through it)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 4, 2, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def desk(services: Services) -> Iterator[tuple[ReminderDesk, Clock]]:
    """The real reminder desk over the composition root's services, on the test's clock."""
    made = reminder_desk_for(services)
    assert made is not None
    clock = Clock()
    made.service.clock = clock  # the time is outside the project: the test sets it
    yield made, clock


def say(desk: ReminderDesk, user: str, command: str, arg: str, lang: str = "en") -> str:
    """Run one command at the desk; the text of its one reply."""
    [card] = asyncio.run(desk.command(user, command, arg, lang))
    return card.text


def rows(desk: ReminderDesk, user: str) -> dict[str, Reminder]:
    """The user's scheduled reminders by text."""
    return {r.text: r for r in desk.service.store.of_user(user, (rs.SCHEDULED,))}


def test_each_kind_of_move_is_named_with_its_new_time(
    desk: tuple[ReminderDesk, Clock],
) -> None:
    d, clock = desk
    user = "telegram_77"
    say(d, user, "tz", "Pacific/Pago_Pago")  # 15:00 on 3 March there
    for phrase in (
        "in 30 minutes tea",
        "at 16:00 call mom",  # in Kiritimati it is 16:00 on the 4th: its 16:00 on the 3rd passed
        "3/6 09:00 dentist",
        "every day at 15:30 stretch",
    ):
        assert "✅" in say(d, user, "remind", phrase)
    before = rows(d, user)
    clock.now += timedelta(minutes=1)
    said = say(d, user, "tz", "Pacific/Kiritimati")
    after, there = rows(d, user), ZoneInfo("Pacific/Kiritimati")

    assert after["tea"].due == before["tea"].due  # a moment: the same instant
    assert f"“tea” at {when_en(after['tea'].due.astimezone(there))}" in said
    assert after["call mom"].due == clock.now  # its clock time passed there: rings now
    assert "“call mom” was set for Tue 3 Mar 2026 16:00, which has already passed" in said
    assert "it rings now" in said
    assert after["dentist"].due == datetime(2026, 3, 6, 9, 0, tzinfo=there)
    assert "Your 1 reminder(s) keep their clock times" in said  # the dentist, at 09:00
    stretch = after["stretch"].due.astimezone(there)
    assert stretch == datetime(2026, 3, 5, 15, 30, tzinfo=there)  # 16:01 on the 4th there
    assert "“stretch” (every day at 15:30): Tue 3 Mar 2026 15:30 has already passed" in said
    assert f"it rings next on {when_en(stretch)}" in said

    # The same zone again: nothing moves; "call mom", due now, is a moment now.
    zh = say(d, user, "tz", "Pacific/Kiritimati", lang="zh")
    assert zh.startswith("🌐 時區已設為 Pacific/Kiritimati。你的 2 個提醒維持原本的鐘點")
    for text in ("tea", "call mom"):
        assert f"「{text}」在 {when_zh(after[text].due.astimezone(there))}" in zh
    assert {t: r.due for t, r in rows(d, user).items()} == {t: r.due for t, r in after.items()}


relative = st.tuples(st.sampled_from(("minutes", "hours")), st.integers(1, 90)).map(
    lambda p: f"in {p[1]} {p[0]}"
)
clock_time = st.tuples(st.integers(0, 23), st.integers(0, 59)).map(
    lambda p: f"{p[0]:02d}:{p[1]:02d}"
)
wall = st.one_of(
    clock_time.map(lambda hm: f"at {hm}"),
    clock_time.map(lambda hm: f"tomorrow {hm}"),
    clock_time.map(lambda hm: f"every day at {hm}"),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    old=st.sampled_from(ZONES),
    new=st.sampled_from(ZONES),
    hour=st.integers(0, 23 * 60),
    said=st.lists(st.one_of(relative, wall), min_size=1, max_size=5),
)
def test_the_tz_reply_matches_what_was_done_to_each_reminder(
    desk: tuple[ReminderDesk, Clock], old: str, new: str, hour: int, said: list[str]
) -> None:
    d, clock = desk
    user = f"telegram_{next(_users)}"
    clock.now = datetime(2026, 6, 1, tzinfo=UTC) + timedelta(minutes=hour)
    say(d, user, "tz", old)
    for n, phrase in enumerate(said):
        assert "✅" in say(d, user, "remind", f"{phrase} task{n}")
    before = rows(d, user)
    reply = say(d, user, "tz", new)
    after, zone = rows(d, user), ZoneInfo(new)
    now = clock.now

    clock_kept = 0
    for n, phrase in enumerate(said):
        text = f"task{n}"
        was, moved = before[text], after[text]
        old_wall = was.due.astimezone(ZoneInfo(old))
        there = at_wall(old_wall.date(), old_wall.hour, old_wall.minute, zone)
        local = moved.due.astimezone(zone)
        if phrase.startswith("in "):  # a moment: kept, named with the time it rings
            assert moved.due == was.due
            assert f"“{text}” at {when_en(local)}" in reply
        elif there <= now and not was.recurrence:  # passed there: rings now, said so
            assert moved.due == now
            assert f"“{text}” was set for {when_en(old_wall)}, which has already passed" in reply
        elif there <= now:  # a recurring one: its next occurrence, said so
            assert moved.due == Recurrence.decode(was.recurrence).next_after(now, zone)
            assert f"“{text}” (" in reply and f"it rings next on {when_en(local)}" in reply
        else:  # the same clock time in the new zone: counted
            assert (local.hour, local.minute) == (old_wall.hour, old_wall.minute)
            assert f"“{text}”" not in reply
            clock_kept += 1
    counted = re.search(r"Your (\d+) reminder\(s\) keep their clock times", reply)
    assert (int(counted.group(1)) if counted else 0) == clock_kept
