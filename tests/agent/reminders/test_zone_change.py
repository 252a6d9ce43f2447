"""``/tz`` moves only what the person meant to move.

A reminder set as a span of time ("in 30 minutes", "in 2 hours", "in 3 days") is an instant: a
change of zone never moves it. One set for a clock time ("tomorrow 08:00", "every day at 07:00")
keeps that clock time in the new zone; a one-off whose clock time has already passed there
rings now, a recurring one goes to its next occurrence. On the old code every one-off kept its
clock time: "in 2 minutes" rang hours early or late.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.reminders import store as rs
from agent.reminders.recurrence import Recurrence, at_wall
from agent.reminders.store import Reminder
from tests.agent.reminders.conftest import World, act

# Far apart (+14 and -11), on half and quarter hours, with and without daylight saving.
ZONES = (
    "Pacific/Kiritimati",
    "Pacific/Pago_Pago",
    "Asia/Kathmandu",
    "America/St_Johns",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Taipei",
    "Australia/Lord_Howe",
    "UTC",
)
_users = itertools.count(1)

relative = st.tuples(st.sampled_from(("minutes", "hours", "days")), st.integers(1, 90)).map(
    lambda p: f"in {p[1]} {p[0]}"
)
clock = st.tuples(st.integers(0, 23), st.integers(0, 59)).map(lambda p: f"{p[0]:02d}:{p[1]:02d}")
wall = st.one_of(
    clock.map(lambda hm: f"tomorrow {hm}"),
    clock.map(lambda hm: f"at {hm}"),
    clock.map(lambda hm: f"every day at {hm}"),
)
phrases = st.lists(st.one_of(relative, wall), min_size=1, max_size=6)


def set_reminders(world: World, user: str, said: list[str]) -> list[tuple[str, Reminder]]:
    """Each phrase, typed and confirmed; (phrase, scheduled row)."""
    service = world.processes[-1].service
    out = []
    for n, phrase in enumerate(said):
        row, _ = service.propose_phrase(user, f"{phrase} task{n}")
        out.append((phrase, service.confirm(act(user, row.id), user, row.id)))
    return out


def meant(before: Reminder, phrase: str, new: ZoneInfo, now: datetime) -> datetime:
    """When the person means the reminder to ring after moving to ``new`` at ``now``."""
    if phrase.startswith("in "):
        return before.due  # an instant: the same moment wherever they are
    if before.recurrence:
        return Recurrence.decode(before.recurrence).next_after(now, new)
    was = before.due.astimezone(ZoneInfo(before.zone))
    there = at_wall(was.date(), was.hour, was.minute, new)
    return there if there > now else now  # its clock time passed there: it rings now


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    old=st.sampled_from(ZONES),
    new=st.sampled_from(ZONES),
    minute_of_year=st.integers(0, 365 * 24 * 60),
    said=phrases,
    wait=st.integers(0, 600),
)
def test_after_tz_each_reminder_rings_when_the_person_meant(
    world: World, old: str, new: str, minute_of_year: int, said: list[str], wait: int
) -> None:
    proc = world.processes[-1] if world.processes else world.start()
    user = f"telegram_{next(_users)}"
    world.clock.now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minute_of_year)
    proc.service.set_zone(user, old)
    rows = set_reminders(world, user, said)
    now = world.clock.advance(seconds=wait)  # the flight: time passes before /tz
    rows = [(p, r) for p, r in rows if r.due > now]  # what rang meanwhile is not moved

    proc.service.set_zone(user, new)

    zone = ZoneInfo(new)
    for phrase, before in rows:
        after = proc.service.store.get(user, before.id)
        want = meant(before, phrase, zone, now)
        assert (after.status, after.due) == (rs.SCHEDULED, want), (phrase, before.due)
        assert proc.scheduler.jobs[after.key] == after.due
        if not phrase.startswith("in "):  # what follows the clock is shown in the new zone
            assert after.zone == new


async def test_a_short_snooze_is_a_moment_and_tomorrow_is_a_clock_time(world: World) -> None:
    """Snoozed "10 minutes" rings 10 minutes after the press wherever the person is; snoozed
    "tomorrow" rings at the alert's clock time, in the new zone."""
    proc = world.start()
    user = "telegram_5"
    rows = set_reminders(world, user, ["at 11:00", "at 11:00"])
    await proc.run_until(world.clock.now + timedelta(hours=1, minutes=1), world.clock)
    assert len(proc.outbox.sent) == 2
    (_, short), (_, late) = rows
    short = proc.service.snooze(user, short.id, "10m")
    late = proc.service.snooze(user, late.id, "tomorrow")

    proc.service.set_zone(user, "America/New_York")  # 13 hours behind Taipei in March

    assert proc.service.store.get(user, short.id).due == short.due
    ny = proc.service.store.get(user, late.id).due.astimezone(ZoneInfo("America/New_York"))
    assert (ny.date().isoformat(), ny.hour, ny.minute) == ("2026-03-05", 11, 0)
