"""Statuses, classes and kinds are StrEnums whose values are what the files and pcai.db hold."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from agent.reminders.store import ReminderStatus, ReminderStore
from bot.schema import BotStateDB as StateDB
from memory.base.markdown import (
    Entry,
    MemoryClass,
    MemoryDocument,
    MemoryStatus,
    parse_memory,
    render_memory,
)
from memory.config import PendingConfig
from memory.write.pending import PendingStore
from memory.write.proposals import ProposalStatus

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=TPE)
ALICE = "telegram_1001"


def test_the_stored_vocabulary_is_unchanged() -> None:
    # Existing MEMORY.md files and pcai.db rows hold these words: a renamed value would
    # silently orphan them.
    assert list(MemoryStatus) == ["active", "deprecated", "low_priority", "archived"]
    assert list(MemoryClass) == ["policy", "episodic", "mixed"]
    assert list(ProposalStatus) == ["pending", "confirmed", "rejected", "expired"]
    assert list(ReminderStatus) == [
        "proposed", "scheduled", "firing", "sent", "done", "cancelled", "unknown", "failed",
    ]  # fmt: skip


def test_an_entry_renders_the_same_bytes_with_enums_or_words() -> None:
    with_enums = Entry(
        "m-1",
        "我喜歡藍色",
        memory_class=MemoryClass.POLICY,
        status=MemoryStatus.LOW_PRIORITY,
        created_at="2026-11-22T10:00:00+08:00",
    )
    with_words = Entry(
        "m-1",
        "我喜歡藍色",
        memory_class="policy",
        status="low_priority",
        created_at="2026-11-22T10:00:00+08:00",
    )
    md = render_memory(MemoryDocument(sections=("General",), entries=(with_enums,)))
    assert md == render_memory(MemoryDocument(sections=("General",), entries=(with_words,)))
    assert "  - status: low_priority\n" in md and "MemoryStatus" not in md
    assert parse_memory(md).entries[0] == with_words


def test_a_status_a_person_wrote_by_hand_is_kept_as_written() -> None:
    md = "# MEMORY\n\n## General\n\n- 我喜歡藍色\n  - id: m-1\n  - status: paused\n"
    entry = parse_memory(md).entries[0]
    assert entry.status == "paused"
    assert "  - status: paused\n" in render_memory(parse_memory(md))


def test_pcai_db_holds_the_plain_words_and_reads_back_members(tmp_path: Path) -> None:
    state = StateDB(tmp_path / "pcai.db")
    try:
        pending = PendingStore(state, PendingConfig())
        p = pending.add(ALICE, "我喜歡藍色", now=T0)
        pending.resolve(p.id, ProposalStatus.REJECTED, now=T0)
        reminders = ReminderStore(state)
        r = reminders.add(ALICE, "call mom", due=T0, zone="Asia/Taipei", now=T0)
        rows = state.conn.execute(
            "SELECT status, typeof(status) FROM pending_memories UNION ALL "
            "SELECT status, typeof(status) FROM reminders"
        ).fetchall()
        assert [tuple(row) for row in rows] == [("rejected", "text"), ("proposed", "text")]
        assert pending.get(ALICE, p.id).status is ProposalStatus.REJECTED
        assert reminders.get(ALICE, r.id).status is ReminderStatus.PROPOSED
    finally:
        state.close()
