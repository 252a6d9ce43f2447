"""Health scores with hand-computed values, and the nightly lifecycle job."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from memory import Memory
from memory.access import AccessStat
from memory.config import LifecycleConfig
from memory.lifecycle import (
    access_frequency,
    entry_health,
    health_score,
    next_status,
    recency_decay,
    retrieval_score,
    weight_factor,
)
from memory.markdown import Entry, MemoryDocument
from memory.sources import KIND_MEMORY

TPE = timezone(timedelta(hours=8))
NOW = datetime(2026, 11, 22, 3, 0, tzinfo=TPE)
USER = "telegram_42"
CFG = LifecycleConfig()


def _iso(days_ago: float) -> str:
    return (NOW - timedelta(days=days_ago)).isoformat(timespec="seconds")


def test_recency_decay_matches_the_documented_examples() -> None:
    assert recency_decay(0) == 1.0
    assert recency_decay(14) == pytest.approx(0.500074, abs=1e-6)
    assert recency_decay(28) == pytest.approx(0.250074, abs=1e-6)
    assert recency_decay(60) == pytest.approx(0.051303, abs=1e-6)


def test_factors_and_scores() -> None:
    assert access_frequency(0) == 0.0
    assert access_frequency(4) == 0.2
    assert access_frequency(40) == 1.0
    assert weight_factor(7) == 0.7
    assert weight_factor(12) == 1.0
    # 0.4*0.8 + 0.25*0.5 + 0.2*0.25 + 0.15*0.7 = 0.32 + 0.125 + 0.05 + 0.105
    assert retrieval_score(0.8, 0.5, 0.25, 0.7) == pytest.approx(0.6)
    # 0.4*0.5 + 0.35*0.2 + 0.25*0.5 = 0.2 + 0.07 + 0.125
    assert health_score(0.5, 0.2, 0.5) == pytest.approx(0.395)


@pytest.mark.parametrize(
    ("days", "weight", "accesses", "health", "status"),
    [
        (1, 5, 0, 0.505682, None),  # stays active
        (14, 5, 0, 0.325029, None),  # just above 0.3
        (21, 5, 0, 0.266453, "low_priority"),
        (60, 5, 0, 0.145521, "archived"),  # just below 0.15
        (60, 5, 4, 0.215521, "low_priority"),  # accesses keep it retrievable
        (60, 8, 0, 0.220521, "low_priority"),  # so does a higher weight
        (28, 0, 0, 0.100029, "archived"),
    ],
)
def test_thresholds_with_hand_computed_health(
    days: int, weight: int, accesses: int, health: float, status: str | None
) -> None:
    entry = Entry(id="m-1", text="t", user_weight=weight, created_at=_iso(days))
    got = entry_health(entry, AccessStat(accesses), NOW, CFG)
    assert got == pytest.approx(health, abs=1e-6)
    assert next_status(entry, got, NOW, CFG) == status


def test_core_and_deprecated_are_never_touched() -> None:
    old = _iso(400)
    for entry in (
        Entry(id="a", text="t", is_core=True, created_at=old),
        Entry(id="b", text="t", user_weight=9, created_at=old),
        Entry(id="c", text="t", status="deprecated", created_at=old),
        Entry(id="d", text="t", is_core=True, status="archived", status_changed_at=old),
    ):
        assert next_status(entry, 0.0, NOW, CFG) is None


def test_archived_is_deleted_only_after_60_days() -> None:
    base = Entry(id="a", text="t", status="archived", created_at=_iso(200))
    assert next_status(replace(base, status_changed_at=_iso(60)), 0.0, NOW, CFG) is None
    assert next_status(replace(base, status_changed_at=_iso(61)), 0.0, NOW, CFG) == "deleted"


def _doc(entries: list[Entry]) -> MemoryDocument:
    return MemoryDocument(sections=("General",), entries=tuple(entries))


def test_nightly_run_changes_statuses_records_them_and_is_idempotent(library: Memory) -> None:
    e = {
        "fresh": Entry(id="m-fresh", text="我昨天開始學吉他", created_at=_iso(1)),
        "faded": Entry(id="m-faded", text="上個月去了一趟花蓮旅行", created_at=_iso(21)),
        "stale": Entry(
            id="m-stale", text="I once tried the durian ice cream", created_at=_iso(60)
        ),
        "used": Entry(id="m-used", text="Wi-Fi 的名稱是 HomeNet 5G", created_at=_iso(60)),
        "core": Entry(
            id="m-core", text="回答一律使用繁體中文", is_core=True, created_at=_iso(300)
        ),
        "gone": Entry(
            id="m-gone",
            text="很久以前的舊記憶",
            status="archived",
            created_at=_iso(200),
            status_changed_at=_iso(61),
        ),
    }
    library.service.write_document(USER, _doc(list(e.values())))
    for _ in range(4):
        library.access.bump(USER, ["m-used", "m-used"], NOW - timedelta(days=1))
    assert library.access.get(USER, "m-used").count == 4
    # Archiving needs a fading notice at least a week old (the week's message said so).
    library.lifecycle.told(USER, ["m-stale"], NOW - timedelta(days=7))

    report = library.lifecycle.run_lifecycle(NOW)
    changes = {(c.entry_id, c.old, c.new) for c in report.changes}
    assert changes == {
        ("m-faded", "active", "low_priority"),
        ("m-stale", "active", "archived"),
        ("m-used", "active", "low_priority"),
        ("m-gone", "archived", "deleted"),
    }
    by_id = library.service.document(USER).by_id()
    assert "m-gone" not in by_id
    assert by_id["m-fresh"].status == "active" and by_id["m-core"].status == "active"
    assert by_id["m-stale"].status_changed_at == "2026-11-22T03:00:00+08:00"
    assert by_id["m-stale"].history == (
        "2026-11-22T03:00:00+08:00 active -> archived: health 0.146",
    )
    text = library.service.paths(USER).memory_md.read_text(encoding="utf-8")
    assert "  - status: low_priority" in text
    assert "active -> low_priority: health 0.266" in text

    hits = library.search(USER, "durian ice cream", 10)
    assert "m-stale" not in [h.chunk.unit_id for h in hits if h.chunk.kind == KIND_MEMORY]
    hits = library.search(USER, "花蓮旅行", 10)
    assert "m-faded" in [h.chunk.unit_id for h in hits if h.chunk.kind == KIND_MEMORY]

    assert library.lifecycle.run_lifecycle(NOW).changes == []
    assert library.lifecycle.run_lifecycle(NOW + timedelta(hours=1)).changes == []


def test_restore_starts_a_new_life_and_an_old_notice_no_longer_counts(library: Memory) -> None:
    stale = Entry(id="m-stale", text="I once tried the durian ice cream", created_at=_iso(60))
    library.service.write_document(USER, _doc([stale]))
    library.lifecycle.told(USER, ["m-stale"], NOW - timedelta(days=8))
    library.lifecycle.run_lifecycle(NOW)
    assert library.service.document(USER).by_id()["m-stale"].status == "archived"
    restored = library.governance.restore(USER, "m-stale", now=NOW + timedelta(hours=8))
    assert restored.status == "active" and restored.refreshed_at.startswith("2026-11-22T11")
    assert restored.history[-1].endswith("archived -> active: restored")
    hits = library.search(USER, "durian ice cream", 10)
    assert "m-stale" in [h.chunk.unit_id for h in hits]

    assert library.lifecycle.run_lifecycle(NOW + timedelta(days=1)).changes == []
    # Recency counts from the restore: two weeks later it is healthy.
    assert library.lifecycle.run_lifecycle(NOW + timedelta(days=15)).changes == []
    # Two months later it fades again; the notice from before the restore does not count.
    later = library.lifecycle.run_lifecycle(NOW + timedelta(days=70))
    assert [(c.entry_id, c.new) for c in later.changes] == [("m-stale", "low_priority")]
    library.lifecycle.told(USER, ["m-stale"], NOW + timedelta(days=70))
    assert library.lifecycle.run_lifecycle(NOW + timedelta(days=76)).changes == []
    last = library.lifecycle.run_lifecycle(NOW + timedelta(days=77))
    assert [(c.entry_id, c.new) for c in last.changes] == [("m-stale", "archived")]
    history = library.service.document(USER).by_id()["m-stale"].history
    assert len(history) == 4  # archived, restored, low priority, archived: all readable
