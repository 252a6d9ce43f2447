"""The reminder service: proposals and the user's acts, snooze, listing, zones, briefings."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, available_timezones

import pytest

from agent.reminders import store as rs
from agent.reminders.errors import (
    BadBriefingTimeError,
    ParseError,
    ReminderExpiredError,
    ReminderInPastError,
    ReminderNotFoundError,
    ReminderStateError,
    UnknownZoneError,
)
from agent.reminders.settings import machine_zone
from agent.reminders.texts import span_zh_en
from tests.agent.reminders.conftest import ALICE, BOB, T0, TPE, World, act


def test_a_proposal_is_not_scheduled_until_its_owner_confirms(world: World) -> None:
    proc = world.start()
    row, parsed = proc.service.propose_phrase(ALICE, "提醒我明天早上九點打電話給媽媽")
    assert row.status == rs.PROPOSED and proc.scheduler.jobs == {}
    assert parsed.understood_zh.startswith("我會在 2026-03-05（週四）09:00")
    # Bob's act does not confirm Alice's proposal, nor does naming it as Bob's
    with pytest.raises(ReminderNotFoundError):
        proc.service.confirm(act(BOB, row.id), ALICE, row.id)
    with pytest.raises(ReminderNotFoundError):
        proc.service.confirm(act(BOB, row.id), BOB, row.id)
    assert proc.service.store.get(ALICE, row.id).status == rs.PROPOSED

    done = proc.service.confirm(act(ALICE, row.id), ALICE, row.id)
    assert done.status == rs.SCHEDULED
    assert proc.scheduler.jobs == {done.key: datetime(2026, 3, 5, 9, 0, tzinfo=TPE)}
    with pytest.raises(ReminderStateError):
        proc.service.confirm(act(ALICE, row.id), ALICE, row.id)  # answering twice


def test_reject_and_expiry(world: World) -> None:
    proc = world.start()
    first, _ = proc.service.propose_phrase(ALICE, "tomorrow 9am dentist")
    assert (
        proc.service.reject(act(ALICE, first.id, "reject"), ALICE, first.id).status == rs.CANCELLED
    )
    second, _ = proc.service.propose_phrase(ALICE, "tomorrow 9am dentist")
    third, _ = proc.service.propose_phrase(ALICE, "tomorrow 10am dentist")
    world.clock.advance(minutes=31)
    with pytest.raises(ReminderExpiredError):
        proc.service.confirm(act(ALICE, second.id), ALICE, second.id)
    assert proc.service.store.get(ALICE, second.id).last_outcome == "expired"
    # a restart drops the proposals nobody answered, once, so each gets one notice
    assert [r.id for r in world.start().service.start().expired] == [third.id]
    assert world.start().service.start().expired == ()
    with pytest.raises(ReminderStateError):
        proc.service.confirm(act(ALICE, third.id), ALICE, third.id)
    assert proc.scheduler.jobs == {}


def test_a_time_that_passed_while_waiting_is_refused(world: World) -> None:
    proc = world.start()
    row, _ = proc.service.propose_phrase(ALICE, "in 10 minutes tea")
    world.clock.advance(minutes=11)
    with pytest.raises(ReminderInPastError):
        proc.service.confirm(act(ALICE, row.id), ALICE, row.id)
    with pytest.raises(ReminderInPastError):
        proc.service.propose(ALICE, "tea", T0 - timedelta(minutes=1))


def test_strangers_see_nothing_and_change_nothing(world: World) -> None:
    proc = world.start()
    row, _ = proc.service.propose_phrase(ALICE, "tomorrow 9am dentist")
    rid = proc.service.confirm(act(ALICE, row.id), ALICE, row.id).id
    for action in (
        lambda: proc.service.cancel(BOB, rid),
        lambda: proc.service.snooze(BOB, rid, "10m"),
        lambda: proc.service.done(BOB, rid),
    ):
        with pytest.raises(ReminderNotFoundError):
            action()
    assert proc.service.listing(BOB) == []
    assert proc.service.store.get(ALICE, rid).status == rs.SCHEDULED


async def test_snooze_10_minutes_1_hour_and_tomorrow(world: World) -> None:
    proc = world.start()
    row, _ = proc.service.propose_phrase(ALICE, "at 5pm water the plants")
    rid = proc.service.confirm(act(ALICE, row.id), ALICE, row.id).id
    five = datetime(2026, 3, 4, 17, 0, tzinfo=TPE)
    await proc.run_until(five, world.clock)
    assert len(proc.outbox.sent) == 1

    world.clock.advance(minutes=2)  # the user presses Snooze 10 min at 17:02
    snoozed = proc.service.snooze(ALICE, rid, "10m")
    assert snoozed.due == five + timedelta(minutes=12) and snoozed.snooze_count == 1
    await proc.run_until(five + timedelta(minutes=12), world.clock)
    assert len(proc.outbox.sent) == 2

    assert proc.service.snooze(ALICE, rid, "1h").due == five + timedelta(minutes=72)
    await proc.run_until(five + timedelta(minutes=72), world.clock)
    # tomorrow at the time of the alert it answers (18:12), not when the button was pressed
    world.clock.advance(minutes=20)
    tomorrow = proc.service.snooze(ALICE, rid, "tomorrow")
    assert tomorrow.due == five + timedelta(days=1, minutes=72) and tomorrow.snooze_count == 3
    await proc.run_until(five + timedelta(days=2), world.clock)
    assert len(proc.outbox.sent) == 4
    assert proc.service.done(ALICE, rid).status == rs.DONE
    with pytest.raises(ReminderStateError):
        proc.service.snooze(ALICE, rid, "10m")


async def test_the_short_snooze_lasts_the_configured_length(world: World) -> None:
    proc = world.start(snooze_length=timedelta(seconds=3))
    row, _ = proc.service.propose_phrase(ALICE, "at 5pm water the plants")
    rid = proc.service.confirm(act(ALICE, row.id), ALICE, row.id).id
    five = datetime(2026, 3, 4, 17, 0, tzinfo=TPE)
    await proc.run_until(five, world.clock)
    world.clock.advance(seconds=20)
    snoozed = proc.service.snooze(ALICE, rid, "10m")
    assert snoozed.due == five + timedelta(seconds=23) and snoozed.snooze_count == 1
    assert proc.scheduler.jobs == {snoozed.key: snoozed.due}
    await proc.run_until(five + timedelta(seconds=22), world.clock)
    assert len(proc.outbox.sent) == 1  # not before its time
    await proc.run_until(five + timedelta(seconds=23), world.clock)
    assert [r for r, _ in proc.outbox.sent] == [rid, rid]
    # the hour and tomorrow do not follow the setting
    assert proc.service.snooze(ALICE, rid, "1h").due == five + timedelta(hours=1, seconds=23)
    with pytest.raises(ValueError, match="longer than 0"):
        world.start(snooze_length=timedelta(0))


def test_the_snooze_button_names_its_length_rounded() -> None:
    assert span_zh_en(timedelta(minutes=10)) == ("10 分鐘", "10 min")
    assert span_zh_en(timedelta(minutes=1.5)) == ("1.5 分鐘", "1.5 min")
    assert span_zh_en(timedelta(minutes=12.34)) == ("12.3 分鐘", "12.3 min")
    assert span_zh_en(timedelta(minutes=0.05)) == ("3 秒", "3 s")  # the tests' setting
    assert span_zh_en(timedelta(seconds=0.2)) == ("1 秒", "1 s")  # never "0 s"


async def test_snoozing_a_recurring_reminder_leaves_its_rule_alone(world: World) -> None:
    proc = world.start()
    row, _ = proc.service.propose_phrase(ALICE, "每天早上八點 吃藥")
    rid = proc.service.confirm(act(ALICE, row.id), ALICE, row.id).id
    eight = datetime(2026, 3, 5, 8, 0, tzinfo=TPE)
    await proc.run_until(eight, world.clock)
    copy = proc.service.snooze(ALICE, rid, "10m")
    assert copy.id != rid and copy.recurrence == "" and copy.source == f"snooze:{rid}"
    await proc.run_until(eight + timedelta(days=1), world.clock)
    assert [r for r, _ in proc.outbox.sent] == [rid, copy.id, rid]
    assert proc.service.done(ALICE, rid).status == rs.SCHEDULED  # it rings again tomorrow


async def test_cancel_stops_a_recurring_reminder_for_good(world: World) -> None:
    proc = world.start()
    row, _ = proc.service.propose_phrase(ALICE, "every Monday 8:00 weekly report")
    rid = proc.service.confirm(act(ALICE, row.id), ALICE, row.id).id
    assert proc.service.cancel(ALICE, rid).status == rs.CANCELLED
    assert proc.scheduler.jobs == {}
    await proc.run_until(T0 + timedelta(days=30), world.clock)
    assert await proc.service.fire(rid) is None and proc.outbox.sent == []
    with pytest.raises(ReminderStateError):
        proc.service.cancel(ALICE, rid)


def test_listing_shows_the_next_time_of_recurring_ones(world: World) -> None:
    proc = world.start()
    for phrase in ("每週一早上八點提醒我交週報", "tomorrow 9am dentist", "5/3 14:00 看牙醫"):
        row, _ = proc.service.propose_phrase(ALICE, phrase)
        if "牙" not in phrase:
            proc.service.confirm(act(ALICE, row.id), ALICE, row.id)
    listed = proc.service.listing(ALICE)
    assert [
        (i.reminder.text, f"{i.next_local:%m-%d %H:%M}", i.reminder.status) for i in listed
    ] == [
        ("dentist", "03-05 09:00", rs.SCHEDULED),
        ("交週報", "03-09 08:00", rs.SCHEDULED),
        ("看牙醫", "05-03 14:00", rs.PROPOSED),
    ]
    assert listed[1].rule is not None and listed[1].rule.describe_zh() == "每週一 08:00"
    zone = listed[1].reminder.zone
    assert listed[1].line("zh") == (
        f"#{listed[1].reminder.id} 2026-03-09（週一）08:00 ({zone}) 交週報 ↻ 每週一 08:00"
    )
    assert listed[1].line("en") == (
        f"#{listed[1].reminder.id} Mon 9 Mar 2026 08:00 ({zone}) 交週報 ↻ every Monday at 08:00"
    )
    assert listed[2].line("zh").endswith("看牙醫（待確認）")
    assert listed[2].line("en").endswith("看牙醫 (awaiting your confirmation)")
    world.clock.now = datetime(2026, 3, 9, 0, 0, tzinfo=TPE)
    assert [i.reminder.text for i in proc.service.today(ALICE)] == ["交週報"]


def test_the_users_zone_defaults_to_the_setting_and_can_change(world: World) -> None:
    proc = world.start(zone="Asia/Taipei")
    assert proc.service.zone(ALICE).key == "Asia/Taipei"
    with pytest.raises(UnknownZoneError):
        proc.service.set_zone(ALICE, "Mars/Olympus")
    with pytest.raises(UnknownZoneError):
        proc.service.set_zone(ALICE, "../../etc/passwd")
    row, _ = proc.service.propose_phrase(ALICE, "every day at 7 stretch")
    daily = proc.service.confirm(act(ALICE, row.id), ALICE, row.id)
    row, _ = proc.service.propose_phrase(ALICE, "tomorrow 9am dentist")
    once = proc.service.confirm(act(ALICE, row.id), ALICE, row.id)

    assert proc.service.set_zone(ALICE, "europe/berlin").key == "Europe/Berlin"
    berlin = ZoneInfo("Europe/Berlin")
    moved = proc.service.store.get(ALICE, daily.id)
    # the daily one keeps 07:00 on the wall clock where Alice now is (04:00 there now, so
    # today's 07:00 is next); the one-off keeps its 09:00 too
    assert moved.zone == "Europe/Berlin"
    assert moved.due == datetime(2026, 3, 4, 7, 0, tzinfo=berlin)
    assert proc.scheduler.jobs[daily.key] == moved.due
    assert proc.service.store.get(ALICE, once.id).due == datetime(2026, 3, 5, 9, 0, tzinfo=berlin)
    assert proc.service.zone(BOB).key == "Asia/Taipei"
    parsed = proc.service.parse(ALICE, "tomorrow 9am x")
    assert parsed.due.tzinfo == berlin and parsed.due.hour == 9


def test_the_machine_zone_is_a_name_not_an_offset(tmp_path: Path) -> None:
    zone_file = tmp_path / "share" / "zoneinfo" / "Europe" / "Berlin"
    zone_file.parent.mkdir(parents=True)
    zone_file.write_bytes(b"TZif")
    link = tmp_path / "localtime"
    link.symlink_to(zone_file)
    assert machine_zone(link) == "Europe/Berlin"
    assert machine_zone(tmp_path / "missing") == "UTC"
    assert machine_zone() in available_timezones()


def test_the_models_tool_proposes_with_an_iso_time(world: World) -> None:
    proc = world.start()
    row = proc.service.propose_iso(ALICE, "2026-03-09T08:00", "交週報", "weekly")
    assert row.status == rs.PROPOSED and row.recurrence == "weekly 0 08:00"
    assert row.due == datetime(2026, 3, 9, 8, 0, tzinfo=TPE)
    aware = proc.service.propose_iso(ALICE, "2026-03-05T01:00:00+00:00", "call")
    assert aware.due == datetime(2026, 3, 5, 9, 0, tzinfo=TPE)
    with pytest.raises(ReminderStateError):
        proc.service.propose_iso(ALICE, "next tuesday", "x")
    with pytest.raises(ReminderStateError):
        proc.service.propose_iso(ALICE, "2026-03-09T08:00", "x", "hourly")
    with pytest.raises(ParseError):
        proc.service.propose_phrase(ALICE, "sometime")


@pytest.mark.parametrize(
    ("when", "recurrence"),
    [
        ("9999-12-31T23:59:59", None),
        ("9999-12-31T23:59:59-12:00", None),  # past year 9999 once in the user's zone
        ("9999-12-31T08:00", "yearly"),
        ("2500-01-01T08:00", "daily"),
    ],
)
def test_the_models_far_future_time_is_one_sentence(
    world: World, when: str, recurrence: str | None
) -> None:
    proc = world.start()
    with pytest.raises(ParseError) as info:
        proc.service.propose_iso(ALICE, when, "far away", recurrence)
    assert info.value.code == "too_far" and "100" in info.value.en and "100" in info.value.zh
    assert proc.service.listing(ALICE) == []


def test_an_id_too_large_for_sqlite_is_not_found(world: World) -> None:
    proc = world.start()
    with pytest.raises(ReminderNotFoundError):
        proc.service.confirm(act(ALICE, 10**20), ALICE, 10**20)


def test_secrets_in_reminder_text_are_masked_before_they_are_stored(world: World) -> None:
    proc = world.start()
    row, _ = proc.service.propose_phrase(ALICE, "tomorrow 9am log in with password: Hunter2xyz!")
    assert "Hunter2xyz" not in row.text and "[REDACTED]" in row.text
    raw = proc.state.conn.execute("SELECT text FROM reminders").fetchone()[0]
    assert "Hunter2xyz" not in raw


def test_a_birthday_memory_offers_the_day_before(world: World) -> None:
    proc = world.start()
    assert proc.service.offer_for_memory(ALICE, "我喜歡藍色") is None
    found = proc.service.offer_for_memory(ALICE, "媽媽生日是5月3日")
    assert found is not None
    row, offer = found
    assert row.status == rs.PROPOSED and row.source == "memory"
    assert row.due == datetime(2026, 5, 2, 9, 0, tzinfo=TPE)
    assert "媽媽生日" in offer.question_zh
    confirmed = proc.service.confirm(act(ALICE, row.id), ALICE, row.id)
    assert proc.scheduler.jobs[confirmed.key] == row.due


async def test_briefing_once_a_day_at_the_users_time(world: World) -> None:
    proc = world.start()
    briefed: list[tuple[str, date]] = []

    async def hook(user_key: str, day: date) -> None:
        briefed.append((user_key, day))

    proc.service.on_briefing = hook
    with pytest.raises(BadBriefingTimeError):
        proc.service.set_briefing(ALICE, "25:00")
    assert proc.service.set_briefing(ALICE, "7:30").briefing_at == "07:30"
    assert proc.scheduler.jobs == {f"briefing:{ALICE}": datetime(2026, 3, 5, 7, 30, tzinfo=TPE)}
    await proc.run_until(datetime(2026, 3, 6, 8, 0, tzinfo=TPE), world.clock)
    assert briefed == [(ALICE, date(2026, 3, 5)), (ALICE, date(2026, 3, 6))]
    # a duplicate wake-up the same day (a restart at 07:30) does not brief twice
    assert await proc.service.briefing_due(ALICE) is False
    restarted = world.start()
    restarted.service.on_briefing = hook
    assert restarted.service.start().briefings == 1
    assert restarted.scheduler.jobs == {
        f"briefing:{ALICE}": datetime(2026, 3, 7, 7, 30, tzinfo=TPE)
    }
    assert restarted.service.set_briefing(ALICE, "off").briefing_at == ""
    assert restarted.scheduler.jobs == {}
    assert len(briefed) == 2


def test_after_tz_every_reminder_keeps_its_clock_time_in_the_new_zone(world: World) -> None:
    proc = world.start()
    once, _ = proc.service.propose_phrase(ALICE, "提醒我明天早上九點打電話給媽媽")
    weekly, _ = proc.service.propose_phrase(ALICE, "every Monday 8:00 weekly report")
    for row in (once, weekly):
        proc.service.confirm(act(ALICE, row.id), ALICE, row.id)
    berlin = ZoneInfo("Europe/Berlin")
    proc.service.set_zone(ALICE, "Europe/Berlin")
    moved = proc.service.store.get(ALICE, once.id)
    assert moved.zone == "Europe/Berlin"
    assert moved.due == datetime(2026, 3, 5, 9, 0, tzinfo=berlin)  # 09:00 stays 09:00
    assert proc.scheduler.jobs[moved.key] == moved.due
    again = proc.service.store.get(ALICE, weekly.id)
    local = again.due.astimezone(berlin)
    assert (again.zone, local.weekday(), local.hour) == ("Europe/Berlin", 0, 8)
