"""The confirmation service: propose -> confirm / edit / reject, restarts, crashes, owners."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import memory
from memory import Memory
from memory.base.guards import scan
from memory.errors import (
    DuplicateMemoryError,
    NoiseError,
    ProposalExpiredError,
    ProposalNotFoundError,
    ProposalResolvedError,
    SensitiveDataError,
)
from memory.index.embedders import E5Embedder
from memory.index.sources import KIND_MEMORY
from memory.write.consent import Action, UserAct
from memory.write.decisions import classify_reply, entry_id_for, parse_reply
from memory.write.proposals import CONFIRMED, REJECTED

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=TPE)
ALICE = "telegram_1001"
BOB = "telegram_2002"


def _act(
    library: Memory, user: str, pid: str, action: Action = "confirm", text: str = ""
) -> UserAct:
    """The user's own act, as the bot layer would seal it."""
    return library.user_acts.act(user, pid, action, via="button", text=text)


def _memory_hits(library: Memory, user: str, query: str) -> list[str]:
    hits = library.search(user, query, 10)
    return [h.chunk.unit_id for h in hits if h.chunk.kind == KIND_MEMORY]


def _count_in_file(library: Memory, user: str, text: str) -> int:
    return library.service.paths(user).memory_md.read_text(encoding="utf-8").count(text)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("確認", "confirm"),
        ("好", "confirm"),
        ("好！", "confirm"),
        ("是", "confirm"),
        ("對。", "confirm"),
        ("Yes", "confirm"),
        (" OK! ", "confirm"),
        ("confirm", "confirm"),
        ("取代", "confirm"),
        ("取消", "reject"),
        ("不要", "reject"),
        ("否", "reject"),
        ("No.", "reject"),
        ("CANCEL", "reject"),
        ("好啊我明天再說", None),
        ("yes but change the colour", None),
        ("我喜歡藍色", None),
        ("", None),
        ("okay then let us talk about something else", None),
    ],
)
def test_classify_reply(reply: str, expected: str | None) -> None:
    assert classify_reply(reply) == expected


def test_replace_and_add_words_carry_the_choice() -> None:
    assert parse_reply("取代") is not None and parse_reply("取代").replace is True  # type: ignore[union-attr]
    assert parse_reply("add") is not None and parse_reply("add").replace is False  # type: ignore[union-attr]
    assert parse_reply("好") is not None and parse_reply("好").replace is None  # type: ignore[union-attr]


def test_propose_restart_confirm(data_dir: Path, embedder: E5Embedder) -> None:
    first = memory.open(data_dir, embedder=embedder)
    p = first.confirm.propose(ALICE, "我喜歡喝咖啡，不加糖", "memory_save", now=T0)
    assert p.section == "偏好 Preferences"
    assert first.service.entries(ALICE) == []  # nothing is written before the answer
    first.close()

    second = memory.open(data_dir, embedder=embedder)
    try:
        entry = second.confirm.confirm(_act(second, ALICE, p.id), now=T0 + timedelta(minutes=5))
        assert entry.id == entry_id_for(p)
        assert [e.id for e in second.service.entries(ALICE)] == [entry.id]
        assert entry.section == "偏好 Preferences"
        assert entry.created_at == "2026-11-22T10:05:00+08:00"
        assert second.pending.get(ALICE, p.id).status == CONFIRMED
        assert entry.id in _memory_hits(second, ALICE, "咖啡")
    finally:
        second.close()


def test_another_users_confirm_is_refused(library: Memory) -> None:
    p = library.confirm.propose(ALICE, "我的貓叫小花", now=T0)
    with pytest.raises(ProposalNotFoundError):
        library.confirm.confirm(_act(library, BOB, p.id), now=T0)
    with pytest.raises(ProposalNotFoundError):
        library.confirm.reject(_act(library, BOB, p.id, "reject"), now=T0)
    with pytest.raises(ProposalNotFoundError):
        library.confirm.edit(_act(library, BOB, p.id, "edit", "我的貓叫小黑"), now=T0)
    assert library.service.entries(BOB) == []
    assert library.service.entries(ALICE) == []
    entry = library.confirm.confirm(_act(library, ALICE, p.id), now=T0)
    assert entry.text == "我的貓叫小花"
    assert library.service.entries(BOB) == []


def test_a_reply_names_its_proposal_even_after_it_is_shown_again(library: Memory) -> None:
    a = library.confirm.propose(ALICE, "我的生日是三月五日", now=T0)
    b = library.confirm.propose(ALICE, "I prefer tea over coffee", now=T0)
    library.pending.attach_message(ALICE, a.id, "501")
    library.pending.attach_message(ALICE, b.id, "502")
    library.pending.attach_message(ALICE, a.id, "503")  # shown again ("which one?")
    assert library.pending.by_message(ALICE, "501").id == a.id  # type: ignore[union-attr]
    assert library.pending.by_message(ALICE, "503").id == a.id  # type: ignore[union-attr]
    assert library.pending.by_message(BOB, "501") is None  # a message id is not a key
    entry = library.confirm.confirm(_act(library, ALICE, a.id), now=T0)
    assert entry.text == "我的生日是三月五日"
    assert library.pending.get(ALICE, b.id).status == "pending"
    rejected = library.confirm.reject(_act(library, ALICE, b.id, "reject"), now=T0)
    assert rejected.id == b.id and rejected.status == REJECTED
    assert [e.text for e in library.service.entries(ALICE)] == ["我的生日是三月五日"]


def test_expiry_job_tells_the_owner_once_and_recall_ignores_pending(library: Memory) -> None:
    p = library.confirm.propose(ALICE, "我的車停在 B2 第 35 號車位", now=T0)
    assert p.id not in _memory_hits(library, ALICE, "車位")
    assert entry_id_for(p) not in _memory_hits(library, ALICE, "車位")
    assert library.confirm.expire_due(T0 + timedelta(minutes=29)) == []
    [expired] = library.confirm.expire_due(T0 + timedelta(minutes=30))
    assert expired.id == p.id and expired.user_key == ALICE
    assert "B2" in expired.text  # the owner is told with it (bot/jobs.py, tests/bot/test_jobs.py)
    assert library.confirm.expire_due(T0 + timedelta(minutes=45)) == []
    with pytest.raises(ProposalExpiredError):
        library.confirm.confirm(_act(library, ALICE, p.id), now=T0 + timedelta(minutes=46))
    assert library.service.entries(ALICE) == []


def test_expired_proposal_is_not_written(library: Memory) -> None:
    p = library.confirm.propose(ALICE, "週五下午要交報告給主管", now=T0)
    with pytest.raises(ProposalExpiredError):
        library.confirm.confirm(_act(library, ALICE, p.id), now=T0 + timedelta(minutes=31))
    assert library.service.entries(ALICE) == []
    assert library.pending.expire_due(T0 + timedelta(hours=1)) == []


@pytest.mark.parametrize(
    "text",
    [
        "記住我的密碼是 hunter22",
        "remember my password: Tr0ub4dor&3",
        "我的信用卡號 4111 1111 1111 1111",
        "my API key is sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4",
        "身分證字號 A123456789 要記得",
    ],
)
def test_secrets_are_refused_with_a_reason(library: Memory, text: str) -> None:
    with pytest.raises(SensitiveDataError) as info:
        library.confirm.propose(ALICE, text, now=T0)
    assert info.value.code == "refused_secret" and info.value.kinds  # said at the edge
    secrets = [text[f.start : f.end] for f in scan(text)]
    assert secrets and not any(s in str(info.value) for s in secrets)  # named, never repeated
    assert library.pending.pending(ALICE) == []


@pytest.mark.parametrize("text", ["你好", "hi there!", "好的", "你記得嗎？"])
def test_noise_is_refused(library: Memory, text: str) -> None:
    with pytest.raises(NoiseError):
        library.confirm.propose(ALICE, text, now=T0)


def test_duplicate_is_refused(library: Memory) -> None:
    p = library.confirm.propose(ALICE, "我喜歡藍色", now=T0)
    library.confirm.confirm(_act(library, ALICE, p.id), now=T0)
    with pytest.raises(DuplicateMemoryError):
        library.confirm.propose(ALICE, "我喜歡藍色！", now=T0)


def test_edit_keeps_id_and_rechecks(library: Memory) -> None:
    p = library.confirm.propose(ALICE, "明天早上九點開會", now=T0)
    edited = library.confirm.edit(_act(library, ALICE, p.id, "edit", "明天早上十點開會"), now=T0)
    assert edited.id == p.id
    with pytest.raises(SensitiveDataError):
        library.confirm.edit(_act(library, ALICE, p.id, "edit", "會議室密碼是 8812abc"), now=T0)
    entry = library.confirm.confirm(_act(library, ALICE, p.id), now=T0)
    assert entry.text == "明天早上十點開會"
    assert entry.section == "工作 Work"


def test_fields_and_derived_summary(library: Memory) -> None:
    long_text = (
        "專案 Apollo 的資料庫決定改用 PostgreSQL。原因是需要 JSONB 與更好的並行寫入，"
        "MySQL 的方案已經放棄，遷移預計在下個月完成。"
    )
    p = library.confirm.propose(
        ALICE,
        long_text,
        "memory_save",
        now=T0,
        fields={"canonical_topic": "database:choice", "user_weight": 8, "scope": "project:apollo"},
    )
    entry = library.confirm.confirm(_act(library, ALICE, p.id), now=T0)
    assert entry.summary == "專案 Apollo 的資料庫決定改用 PostgreSQL"
    assert len(entry.summary) <= 50
    assert (entry.canonical_topic, entry.user_weight, entry.scope) == (
        "database:choice",
        8,
        "project:apollo",
    )
    assert library.service.entries(ALICE)[0] == entry  # what was written reads back the same


def test_index_failure_after_markdown_write_is_repaired(
    library: Memory, data_dir: Path, embedder: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = library.confirm.propose(ALICE, "我在台北的信義區上班", now=T0)

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full while indexing")

    monkeypatch.setattr(library.service.indexer, "sync_file", crash)
    # The Markdown is the truth: no error.
    entry = library.confirm.confirm(_act(library, ALICE, p.id), now=T0)
    monkeypatch.undo()
    assert library.store.indexed_units(ALICE, "MEMORY.md") == {}
    library.close()

    fresh = memory.open(data_dir, embedder=embedder)
    try:
        assert entry.id in _memory_hits(fresh, ALICE, "信義區上班")
        assert list(fresh.store.indexed_units(ALICE, "MEMORY.md")) == [entry.id]
        assert _count_in_file(fresh, ALICE, "我在台北的信義區上班") == 1
    finally:
        fresh.close()


def test_crash_before_the_pending_update_does_not_duplicate(
    library: Memory, data_dir: Path, embedder: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = library.confirm.propose(ALICE, "我女兒的生日是七月七日", now=T0)

    class Killed(BaseException):
        """Stands in for the process dying between two statements."""

    def die(*args: object, **kwargs: object) -> bool:
        raise Killed

    monkeypatch.setattr(library.pending, "resolve", die)
    with pytest.raises(Killed):
        library.confirm.confirm(_act(library, ALICE, p.id), now=T0)
    monkeypatch.undo()
    library.close()

    fresh = memory.open(data_dir, embedder=embedder)
    try:
        # The restart found the entry in MEMORY.md and marked the proposal confirmed.
        healed = fresh.pending.get(ALICE, p.id)
        assert healed.status == "confirmed"
        with pytest.raises(ProposalResolvedError):  # a retried confirm writes nothing
            fresh.confirm.confirm(_act(fresh, ALICE, p.id), now=T0 + timedelta(minutes=1))
        [entry] = fresh.service.entries(ALICE)
        assert entry.id == healed.entry_id
        assert _count_in_file(fresh, ALICE, "我女兒的生日是七月七日") == 1
        assert entry.id in _memory_hits(fresh, ALICE, "女兒生日")
        assert list(fresh.store.indexed_units(ALICE, "MEMORY.md")) == [entry.id]
    finally:
        fresh.close()
