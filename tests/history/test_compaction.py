"""Compaction (docs/conversations.md, "Compaction"): threshold, both files, the next prompt."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from history.compaction import NOTE_PREFIX, Compactor
from history.config import HistoryConfig
from history.context import history_context
from history.sessions import Session
from history.summarize import SummaryService
from memory.logs import parse_log
from memory.users import UserPaths
from tests.history.conftest import HistoryKit

USER = "telegram_42"
# 23:30 UTC is already the next day in Taipei: files must follow the user's day.
NOW = datetime(2026, 2, 8, 23, 30, tzinfo=UTC)
TOPICS = [
    "Fallback Bot 的 pgrep 誤匹配要怎麼修？",
    "我們決定改用 curl API 再精確匹配。",
    "哈哈",
    "任務板用 scripts/task-board-api.sh，預算 3000 元。",
    "下一步：明天殺掉 gateway 測 fallback 接管。",
]


def chat(turns: int) -> Session:
    session = Session(USER)
    for i in range(turns):
        when = NOW - timedelta(minutes=2 * (turns - i))
        session.append("user", f"{TOPICS[i % len(TOPICS)]} (turn {i})", when, msg_id=f"tg-{i}")
        if i < turns - 1:  # the last message is the one about to be answered
            session.append("assistant", f"好的，第 {i} 輪已處理。", when + timedelta(seconds=30))
    return session


def compactor(kit: HistoryKit, config: HistoryConfig | None = None) -> Compactor:
    s = kit.library
    return Compactor(
        s.data_dir,
        SummaryService(None),
        s.counter,
        config or kit.history,
        kit.daily_log,
        on_written=s.indexer.sync_file,
    )


async def test_turn_threshold_writes_both_files_and_keeps_summary_plus_last_turns(
    kit: HistoryKit,
) -> None:
    comp = compactor(kit)
    session = chat(14)
    assert not comp.check(session).triggered
    assert await comp.maybe_compact(session, USER, NOW) is None
    session.append("user", "15th turn: 總結一下？", NOW, msg_id="tg-14")
    assert comp.check(session).reason == "turns"

    result = await comp.maybe_compact(session, USER, NOW)
    assert result is not None and result.heading == "對話摘要 (2026-02-09)"

    paths = UserPaths.of(kit.library.data_dir, USER)
    full = paths.memory_full_md.read_text("utf-8")
    assert "## 對話摘要 (2026-02-09)\n" in full
    assert "curl API" in full and "3000 元" in full and "其間穿插閒聊" in full
    log_records = parse_log("2026-02-09", paths.daily_log("2026-02-09").read_text("utf-8"))
    assert [r.who for r in log_records] == ["summary"]
    assert log_records[0].text.startswith("本段討論摘要：")

    # the session now holds one note + the last 5 user turns (with their replies)
    note, *kept = session.messages
    assert note.kind == "compaction" and note.content.startswith(NOTE_PREFIX)
    assert "MEMORY_FULL.md § 對話摘要 (2026-02-09)" in note.content
    assert "memory/2026-02-09.md" in note.content
    assert [m.content.split("(turn ")[-1] for m in kept if m.role == "user"] == [
        "10)",
        "11)",
        "12)",
        "13)",
        "15th turn: 總結一下？",
    ]
    assert session.user_turns == 5 and not comp.check(session).triggered
    prompt = history_context(session.messages, kit.history)
    assert prompt.startswith(NOTE_PREFIX)
    assert "User: 15th turn: 總結一下？" in prompt and "(turn 9)" not in prompt

    # and the summary is searchable
    hits = kit.library.search(USER, "curl API 精確匹配")
    assert any(h.chunk.path == "MEMORY_FULL.md" for h in hits)


async def test_token_threshold_triggers_and_the_prompt_drops_below_it(kit: HistoryKit) -> None:
    config = replace(kit.history, auto_write_threshold_tokens=1500)
    comp = compactor(kit, config)
    session = Session(USER)
    n = 0
    while not comp.check(session, extra_tokens=200).triggered:
        session.append(
            "user", f"第 {n} 段：" + "我們討論 sqlite-vec 的向量索引與 FTS5 的斷詞。" * 8, NOW
        )
        session.append("assistant", "Noted. " * 20, NOW)
        n += 1
    checked = comp.check(session, extra_tokens=200)
    assert checked.reason == "tokens" and checked.user_turns < 15
    result = await comp.maybe_compact(session, USER, NOW, extra_tokens=200)
    assert result is not None
    assert result.tokens_after + 200 < 1500 <= result.tokens_before + 200
    assert session.messages[0].kind == "compaction"


async def test_a_second_compaction_appends_and_replaces_the_note(kit: HistoryKit) -> None:
    comp = compactor(kit)
    session = chat(15)
    await comp.maybe_compact(session, USER, NOW)
    for i in range(10):
        session.append(
            "user", f"新話題：日本旅遊行程第 {i} 天去京都", NOW + timedelta(hours=1, minutes=i)
        )
        session.append("assistant", "好的", NOW + timedelta(hours=1, minutes=i))
    result = await comp.maybe_compact(session, USER, NOW + timedelta(hours=2))
    assert result is not None
    notes = [m for m in session.messages if m.kind == "compaction"]
    assert len(notes) == 1 and "更早的摘要" in notes[0].content
    full = UserPaths.of(kit.library.data_dir, USER).memory_full_md.read_text("utf-8")
    assert full.count("## 對話摘要 (") == 2 and "京都" in full


async def test_a_crash_before_the_session_was_saved_does_not_write_twice(kit: HistoryKit) -> None:
    comp = compactor(kit)
    session = chat(15)
    before = list(session.messages)
    await comp.maybe_compact(session, USER, NOW)
    session.messages = before  # the process died before the trimmed session was saved
    assert await comp.maybe_compact(session, USER, NOW) is not None
    paths = UserPaths.of(kit.library.data_dir, USER)
    assert paths.memory_full_md.read_text("utf-8").count("## 對話摘要 (") == 1
    records = parse_log("2026-02-09", paths.daily_log("2026-02-09").read_text("utf-8"))
    assert len(records) == 1


async def test_a_plan_trims_exactly_its_messages_when_turns_came_after_it(kit: HistoryKit) -> None:
    comp = compactor(kit)
    session = chat(15)
    plan = comp.plan(session)
    assert plan is not None
    older = comp.planned(session, plan)
    assert older is not None and len(older) == plan.count
    later = NOW + timedelta(minutes=5)
    session.append("user", "a turn after the plan was made", later, msg_id="tg-15")
    summary = await comp.summaries.conversation_summary(older)
    result = await comp.apply(session, USER, NOW, plan, summary)
    assert result is not None and result.removed == plan.count
    note, *kept = session.messages
    assert note.kind == "compaction" and kept[-1].content == "a turn after the plan was made"
    assert [m for m in kept if m.content.endswith("(turn 9)")] == []  # summarised and gone


async def test_a_plan_whose_messages_changed_writes_nothing(kit: HistoryKit) -> None:
    comp = compactor(kit)
    session = chat(15)
    plan = comp.plan(session)
    assert plan is not None
    older = comp.planned(session, plan)
    assert older is not None
    summary = await comp.summaries.conversation_summary(older)
    # A /forget redacted a planned message while the summary was being written.
    session.messages[2] = replace(session.messages[2], content="[已忘記]")
    assert await comp.apply(session, USER, NOW, plan, summary) is None
    paths = UserPaths.of(kit.library.data_dir, USER)
    assert not paths.memory_full_md.exists()
    assert not any(m.kind == "compaction" for m in session.messages)
