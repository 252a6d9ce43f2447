"""The pending store in pcai.db: expiry with a fake clock, owners, restarts, message lookup."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory.config import PendingConfig
from memory.state.statedb import StateDB
from memory.write.pending import (
    PendingStore,
    ProposalExpiredError,
    ProposalNotFoundError,
    ProposalResolvedError,
)
from memory.write.proposals import CONFIRMED, EXPIRED, PENDING

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=TPE)
ALICE = "telegram_1001"
BOB = "telegram_2002"


@pytest.fixture
def state(tmp_path: Path) -> Iterator[StateDB]:
    db = StateDB(tmp_path / "pcai.db")
    yield db
    db.close()


@pytest.fixture
def store(state: StateDB) -> PendingStore:
    return PendingStore(state, PendingConfig(ttl_minutes=30))


def test_proposal_survives_a_restart(tmp_path: Path) -> None:
    first = StateDB(tmp_path / "pcai.db")
    p = PendingStore(first, PendingConfig()).add(
        ALICE, "我喜歡藍色", now=T0, section="偏好", source="tool", fields={"user_weight": 7}
    )
    first.close()
    second = StateDB(tmp_path / "pcai.db")
    try:
        again = PendingStore(second, PendingConfig()).get(ALICE, p.id)
    finally:
        second.close()
    assert again == p
    assert again.fields == {"user_weight": 7}
    assert again.expires_at == T0 + timedelta(minutes=30)


def test_ttl_comes_from_the_config(state: StateDB) -> None:
    p = PendingStore(state, PendingConfig(ttl_minutes=5)).add(ALICE, "記住這件事", now=T0)
    assert p.expires_at - p.created_at == timedelta(minutes=5)


def test_expiry_reports_each_proposal_exactly_once(store: PendingStore) -> None:
    a = store.add(ALICE, "我喜歡藍色", now=T0)
    b = store.add(BOB, "I like green tea", now=T0 + timedelta(minutes=10))
    assert store.expire_due(T0 + timedelta(minutes=29, seconds=59)) == []
    due = store.expire_due(T0 + timedelta(minutes=30))
    assert [p.id for p in due] == [a.id]
    assert store.expire_due(T0 + timedelta(minutes=31)) == []
    later = store.expire_due(T0 + timedelta(hours=2))
    assert [p.id for p in later] == [b.id]
    assert store.expire_due(T0 + timedelta(hours=3)) == []
    assert store.get(ALICE, a.id).status == EXPIRED
    assert store.pending(ALICE) == [] and store.pending(BOB) == []


def test_using_an_expired_proposal_tells_the_owner_and_the_job_stays_silent(
    store: PendingStore,
) -> None:
    p = store.add(ALICE, "我喜歡藍色", now=T0)
    with pytest.raises(ProposalExpiredError, match="expired"):
        store.live(ALICE, p.id, T0 + timedelta(minutes=31))
    assert store.expire_due(T0 + timedelta(minutes=32)) == []
    with pytest.raises(ProposalExpiredError):
        store.live(ALICE, p.id, T0 + timedelta(minutes=33))


def test_another_user_cannot_see_or_use_a_proposal(store: PendingStore) -> None:
    p = store.add(ALICE, "我喜歡藍色", now=T0)
    with pytest.raises(ProposalNotFoundError):
        store.get(BOB, p.id)
    with pytest.raises(ProposalNotFoundError):
        store.live(BOB, p.id, T0)
    with pytest.raises(ProposalNotFoundError):
        store.attach_message(BOB, p.id, "77")
    assert store.pending(BOB) == []
    assert store.get(ALICE, p.id).status == PENDING


def test_reply_lookup_by_chat_message(store: PendingStore) -> None:
    p = store.add(ALICE, "我喜歡藍色", now=T0)
    store.attach_message(ALICE, p.id, "4242")
    found = store.by_message(ALICE, "4242")
    assert found is not None and found.id == p.id
    assert store.by_message(BOB, "4242") is None
    assert store.by_message(ALICE, "9999") is None
    assert store.by_message(ALICE, "") is None


def test_edit_keeps_the_id_and_restarts_the_expiry(store: PendingStore) -> None:
    p = store.add(ALICE, "我喜歡藍色", now=T0)
    edited = store.update_text(ALICE, p.id, "我喜歡深藍色", now=T0 + timedelta(minutes=20))
    assert edited.id == p.id and edited.text == "我喜歡深藍色"
    assert edited.expires_at == T0 + timedelta(minutes=50)
    assert store.expire_due(T0 + timedelta(minutes=40)) == []


def test_resolved_proposals_cannot_be_answered_twice_and_are_purged_later(
    store: PendingStore,
) -> None:
    p = store.add(ALICE, "我喜歡藍色", now=T0)
    assert store.resolve(p.id, CONFIRMED, now=T0, entry_id="m-1")
    assert not store.resolve(p.id, CONFIRMED, now=T0)
    with pytest.raises(ProposalResolvedError):
        store.live(ALICE, p.id, T0)
    store.expire_due(T0 + timedelta(days=6))
    assert store.get(ALICE, p.id).entry_id == "m-1"
    store.expire_due(T0 + timedelta(days=8))
    with pytest.raises(ProposalNotFoundError):
        store.get(ALICE, p.id)


def test_naive_times_are_refused(store: PendingStore) -> None:
    with pytest.raises(ValueError, match="timezone"):
        store.add(ALICE, "我喜歡藍色", now=datetime(2026, 1, 1))
