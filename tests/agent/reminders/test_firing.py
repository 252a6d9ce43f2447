"""Firing with a fake clock: restarts, crashes during the send, late reminders, recurrences."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from agent.reminders import store as rs
from agent.reminders.recurrence import Recurrence
from tests.agent.reminders.conftest import ALICE, T0, TPE, Outbox, ProcessDied, World, act


def _scheduled(world: World, phrase: str, user: str = ALICE) -> int:
    """Propose and confirm a reminder in a first process; returns its id."""
    service = world.processes[-1].service if world.processes else world.start().service
    row, _ = service.propose_phrase(user, phrase)
    return service.confirm(act(user, row.id), user, row.id).id


async def test_fires_once_at_its_time(world: World) -> None:
    proc = world.start()
    rid = _scheduled(world, "in 10 minutes check the oven")
    assert proc.scheduler.jobs == {f"reminder:{rid}": T0 + timedelta(minutes=10)}
    await proc.run_until(T0 + timedelta(minutes=9), world.clock)
    assert proc.outbox.sent == []
    await proc.run_until(T0 + timedelta(hours=1), world.clock)
    # nothing tells the service Alice's language: English, one language (not both)
    assert proc.outbox.sent == [(rid, "⏰ Reminder: check the oven")]
    row = proc.service.store.get(ALICE, rid)
    assert row.status == rs.SENT and row.sent_at == T0 + timedelta(minutes=10)
    # a second wake-up for the same reminder (a duplicate job, a poll) sends nothing
    assert await proc.service.fire(rid) is None
    assert await proc.service.fire_due() == []
    assert len(proc.outbox.sent) == 1


async def test_a_restart_between_scheduling_and_firing_fires_it_exactly_once(
    world: World,
) -> None:
    first = world.start()
    rid = _scheduled(world, "明天早上九點 打電話給媽媽")
    first.state.close()  # the process stops; its scheduler and its jobs are gone

    second = world.start()
    report = second.service.start()
    assert report.scheduled == 1 and report.late == () and report.uncertain == ()
    due = datetime(2026, 3, 5, 9, 0, tzinfo=TPE)
    assert second.scheduler.jobs == {f"reminder:{rid}": due}
    await second.run_until(due + timedelta(days=2), world.clock)
    assert [r for r, _ in second.outbox.sent] == [rid]

    third = world.start()  # and a later restart does not send it again
    assert third.service.start().scheduled == 0
    await third.run_until(due + timedelta(days=9), world.clock)
    assert first.outbox.sent == [] and third.outbox.sent == []


async def test_two_processes_waking_together_send_once(world: World) -> None:
    a = world.start()
    rid = _scheduled(world, "in 5 minutes stretch")
    b = world.start()  # a second connection to the same pcai.db
    world.clock.advance(minutes=5)

    results = await asyncio.gather(a.service.fire(rid), b.service.fire(rid))
    assert sorted(r is None for r in results) == [False, True]
    assert len(a.outbox.sent) + len(b.outbox.sent) == 1


@pytest.mark.parametrize("when", ["before", "after"])
async def test_a_crash_during_the_send_never_sends_twice(world: World, when: str) -> None:
    """The process dies after the claim, before or after the message left: at most once."""
    dying = world.start(Outbox(die=when))
    rid = _scheduled(world, "in 10 minutes take the pills")
    with pytest.raises(ProcessDied):
        await dying.run_until(T0 + timedelta(minutes=10), world.clock)
    assert dying.service.store.get(ALICE, rid).status == rs.FIRING
    sent_before_crash = len(dying.outbox.sent)
    assert sent_before_crash == (1 if when == "after" else 0)

    world.clock.advance(minutes=1)
    restarted = world.start()
    report = restarted.service.start()
    assert [r.id for r in report.uncertain] == [rid] and report.scheduled == 0
    await restarted.run_until(T0 + timedelta(days=3), world.clock)
    await restarted.service.fire_due()
    assert restarted.outbox.sent == []
    row = restarted.service.store.get(ALICE, rid)
    assert row.status == rs.UNKNOWN and row.last_outcome == "unknown"
    # the user still sees it, marked, in the list
    assert [item.reminder.id for item in restarted.service.listing(ALICE)] == [rid]


async def test_a_recurring_reminder_interrupted_mid_send_goes_on_with_its_next_time(
    world: World,
) -> None:
    dying = world.start(Outbox(die="after"))
    rid = _scheduled(world, "每天早上八點 吃藥")
    with pytest.raises(ProcessDied):
        await dying.run_until(datetime(2026, 3, 5, 8, 0, tzinfo=TPE), world.clock)

    restarted = world.start()
    report = restarted.service.start()
    assert [r.id for r in report.uncertain] == [rid]
    await restarted.run_until(datetime(2026, 3, 6, 12, 0, tzinfo=TPE), world.clock)
    # 3/5 was (maybe) delivered by the dead process and is not repeated; 3/6 rings once
    assert len(dying.outbox.sent) == 1 and [r for r, _ in restarted.outbox.sent] == [rid]
    row = restarted.service.store.get(ALICE, rid)
    assert row.due == datetime(2026, 3, 7, 8, 0, tzinfo=TPE) and row.status == rs.SCHEDULED


async def test_missed_while_down_is_sent_late_once(world: World) -> None:
    first = world.start()
    rid = _scheduled(world, "今天晚上八點 倒垃圾")
    first.state.close()
    world.clock.now = datetime(2026, 3, 4, 23, 30, tzinfo=TPE)  # down from 19:00 to 23:30

    second = world.start()
    report = second.service.start()
    assert [r.id for r in report.late] == [rid]
    assert second.scheduler.jobs[f"reminder:{rid}"] == world.clock.now  # right away
    await second.run_until(world.clock.now, world.clock)
    ((sent_id, text),) = second.outbox.sent
    assert sent_id == rid
    assert text == "⏰ Reminder (late, was due Wed 4 Mar 2026 20:00): 倒垃圾"  # nothing known
    assert second.service.store.get(ALICE, rid).last_outcome == "late"


async def test_a_recurring_reminder_missed_for_days_rings_once_then_keeps_its_rule(
    world: World,
) -> None:
    first = world.start()
    rid = _scheduled(world, "every day at 7 stretch")
    first.state.close()
    world.clock.now = datetime(2026, 3, 8, 12, 0, tzinfo=TPE)  # four occurrences missed

    second = world.start()
    second.service.start()
    await second.run_until(datetime(2026, 3, 9, 7, 30, tzinfo=TPE), world.clock)
    assert [("late" in t) for _, t in second.outbox.sent] == [True, False]
    row = second.service.store.get(ALICE, rid)
    assert row.due == datetime(2026, 3, 10, 7, 0, tzinfo=TPE)


async def test_a_refused_send_is_retried_then_given_up(world: World) -> None:
    proc = world.start(Outbox(refuse=True))
    rid = _scheduled(world, "in 1 minute ping")
    await proc.run_until(T0 + timedelta(minutes=30), world.clock)
    row = proc.service.store.get(ALICE, rid)
    assert row.status == rs.FAILED and row.attempts == proc.service.config.max_attempts
    assert proc.scheduler.jobs == {}


async def test_a_send_error_of_unknown_effect_is_not_retried(world: World) -> None:
    proc = world.start(Outbox(error=True))
    rid = _scheduled(world, "in 1 minute ping")
    await proc.run_until(T0 + timedelta(minutes=30), world.clock)
    row = proc.service.store.get(ALICE, rid)
    assert row.status == rs.UNKNOWN and row.attempts == 0 and proc.scheduler.jobs == {}


async def test_weekly_reminder_keeps_8am_across_berlins_dst_change(world: World) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    world.clock.now = datetime(2026, 3, 20, 12, 0, tzinfo=berlin)
    proc = world.start(zone="Europe/Berlin")
    rid = _scheduled(world, "every Monday 8:00 weekly report")
    await proc.run_until(datetime(2026, 4, 7, tzinfo=berlin), world.clock)
    fired = [proc.service.store.get(ALICE, rid)]
    assert len(proc.outbox.sent) == 3  # 23 March (CET), 30 March (CEST), 6 April
    assert fired[0].due == datetime(2026, 4, 13, 8, 0, tzinfo=berlin)
    # the wake-ups were at 07:00 UTC before the change and 06:00 UTC after it
    rule = Recurrence.decode(fired[0].recurrence)
    times = [datetime(2026, 3, 20, tzinfo=berlin)]
    for _ in range(3):
        times.append(rule.next_after(times[-1], berlin))
    assert [t.astimezone(UTC).hour for t in times[1:]] == [7, 6, 6]


async def test_nothing_is_claimed_without_a_sender(world: World) -> None:
    proc = world.start()
    rid = _scheduled(world, "in 1 minute ping")
    proc.service.sender = None
    world.clock.advance(minutes=2)
    assert await proc.service.fire(rid) is None
    assert proc.service.store.get(ALICE, rid).status == rs.SCHEDULED
