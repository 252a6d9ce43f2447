"""The reminder table in pcai.db: owners, guarded transitions, the claim, per-user settings."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent.reminders import store as rs
from agent.reminders.store import ReminderNotFoundError, ReminderStore
from bot.schema import BotStateDB as StateDB
from memory.errors import InvalidUserKeyError

T0 = datetime(2026, 3, 4, 2, 0, tzinfo=UTC)
ALICE = "telegram_1001"
BOB = "telegram_2002"


@pytest.fixture
def states(tmp_path: Path) -> Iterator[list[StateDB]]:
    """Two connections to one pcai.db, as two processes would have."""
    made = [StateDB(tmp_path / "pcai.db"), StateDB(tmp_path / "pcai.db")]
    yield made
    for s in made:
        s.close()


def _scheduled(store: ReminderStore, minutes: int = 10, **kw: str) -> rs.Reminder:
    return store.add(
        ALICE,
        "call mom",
        due=T0 + timedelta(minutes=minutes),
        zone="Asia/Taipei",
        now=T0,
        status=rs.SCHEDULED,
        **kw,
    )


def test_rows_belong_to_their_owner(states: list[StateDB]) -> None:
    store = ReminderStore(states[0])
    row = store.add(ALICE, "  call mom ", due=T0, zone="Asia/Taipei", now=T0)
    assert row.status == rs.PROPOSED and row.key == f"reminder:{row.id}"
    assert store.get(ALICE, row.id) == row
    with pytest.raises(ReminderNotFoundError):
        store.get(BOB, row.id)
    assert store.of_user(BOB) == []
    with pytest.raises(InvalidUserKeyError):
        store.add("../alice", "x", due=T0, zone="UTC", now=T0)
    with pytest.raises(ValueError):
        store.add(ALICE, "x", due=T0.replace(tzinfo=None), zone="UTC", now=T0)


def test_only_one_claim_wins_across_connections(states: list[StateDB]) -> None:
    a, b = ReminderStore(states[0]), ReminderStore(states[1])
    row = _scheduled(a)
    assert a.claim(row.id, T0) is None  # not due yet
    now = T0 + timedelta(minutes=10)
    won = a.claim(row.id, now)
    assert won is not None and won.status == rs.FIRING and won.occurrence == won.due
    assert b.claim(row.id, now) is None and a.claim(row.id, now) is None
    assert [r.id for r in b.stuck()] == [row.id]
    assert a.cancel(row.id, now) is None  # being sent: cannot be cancelled
    done = b.finish(row.id, now, "sent", message_id="77")
    assert done is not None and done.status == rs.SENT and done.message_id == "77"
    assert a.finish(row.id, now, "sent") is None  # finishing twice changes nothing


def test_finish_moves_a_recurring_row_to_its_next_time(states: list[StateDB]) -> None:
    store = ReminderStore(states[0])
    row = _scheduled(store, recurrence="daily 10:10")
    now = T0 + timedelta(minutes=10)
    store.claim(row.id, now)
    nxt = now + timedelta(days=1)
    again = store.finish(row.id, now, "unknown", next_due=nxt)
    assert again is not None
    assert (again.status, again.due, again.last_outcome) == (rs.SCHEDULED, nxt, "unknown")
    assert store.due_ids(now) == [] and store.due_ids(nxt) == [row.id]


def test_retry_counts_attempts_then_fails(states: list[StateDB]) -> None:
    store = ReminderStore(states[0])
    row = _scheduled(store, minutes=0)
    statuses = []
    for attempt in range(3):
        at = T0 + timedelta(minutes=attempt)
        assert store.claim(row.id, at) is not None
        got = store.retry(row.id, at + timedelta(minutes=1), max_attempts=3)
        assert got is not None
        statuses.append((got.status, got.attempts))
    assert statuses == [(rs.SCHEDULED, 1), (rs.SCHEDULED, 2), (rs.FAILED, 3)]


def test_reschedule_counts_snoozes_and_refuses_finished_rows(states: list[StateDB]) -> None:
    store = ReminderStore(states[0])
    row = _scheduled(store)
    later = T0 + timedelta(hours=1)
    moved = store.reschedule(row.id, later, T0, snooze=True)
    assert moved is not None and (moved.due, moved.snooze_count, moved.snoozed_at) == (
        later,
        1,
        T0,
    )
    plain = store.reschedule(row.id, later, T0, snooze=False)
    assert plain is not None and plain.snooze_count == 1
    assert store.done(row.id, T0) is not None
    assert store.reschedule(row.id, later, T0, snooze=True) is None
    proposal = store.add(ALICE, "x", due=later, zone="UTC", now=T0)
    assert store.reschedule(proposal.id, later, T0, snooze=True) is None  # not confirmed


def test_unanswered_proposals_expire_once(states: list[StateDB]) -> None:
    store = ReminderStore(states[0])
    old = store.add(ALICE, "old", due=T0 + timedelta(days=1), zone="UTC", now=T0)
    store.add(ALICE, "new", due=T0 + timedelta(days=1), zone="UTC", now=T0 + timedelta(hours=1))
    cutoff = T0 + timedelta(minutes=30)
    assert [r.id for r in store.expire_proposals(cutoff)] == [old.id]
    assert store.expire_proposals(cutoff) == []
    assert store.get(ALICE, old.id).last_outcome == "expired"


def test_user_settings_and_one_briefing_a_day(states: list[StateDB]) -> None:
    users = ReminderStore(states[0]).users
    assert users.settings(ALICE).zone == "" and users.settings(ALICE).briefing_at == ""
    users.set_zone(ALICE, "Europe/Berlin")
    users.set_briefing(ALICE, "07:30")
    assert users.settings(ALICE).zone == "Europe/Berlin"  # one setting leaves the other alone
    assert [s.user_key for s in users.with_briefing()] == [ALICE]
    assert users.claim_briefing(BOB, "2026-03-04") is False  # Bob has no briefing
    other = ReminderStore(states[1]).users
    assert users.claim_briefing(ALICE, "2026-03-04") is True
    assert other.claim_briefing(ALICE, "2026-03-04") is False
    assert other.claim_briefing(ALICE, "2026-03-05") is True
    users.set_briefing(ALICE, "")
    assert users.with_briefing() == []
