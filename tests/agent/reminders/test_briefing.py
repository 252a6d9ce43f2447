"""The morning briefing's content from the real stores, and its plain-list rendering."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from agent.reminders.briefing import BriefingBuilder, render_briefing, todos_from
from agent.reminders.service import ReminderService
from agent.reminders.store import ReminderStore
from bot.app import Services
from history.sessions import KIND_COMPACTION, ROLE_ASSISTANT, ROLE_USER, Message, Session
from memory.base.markdown import Entry, MemoryDocument
from memory.config import LifecycleConfig
from memory.state.short_term import ShortTermStore
from tests.agent.reminders.conftest import MINT, TPE, act

USER = "telegram_42"
NOW = datetime(2026, 11, 22, 7, 30, tzinfo=TPE)  # a Sunday morning


def _iso(days_ago: float) -> str:
    return (NOW - timedelta(days=days_ago)).isoformat(timespec="seconds")


def _summary(todo: str) -> str:
    return f"Goal: 準備簡報 | Decision: - | Todo: {todo} | Facts: -"


def test_todos_come_from_recent_structured_summaries_and_compaction_notes() -> None:
    messages = [
        Message(ROLE_USER, "…", NOW - timedelta(days=10), summary=_summary("太舊的待辦")),
        Message(ROLE_USER, "…", NOW - timedelta(days=2), summary=_summary("寄合約給王經理")),
        Message(
            ROLE_ASSISTANT,
            "[對話摘要] 主題：搬家；待辦：訂搬家公司；決定：月底搬",
            NOW - timedelta(days=1),
            kind=KIND_COMPACTION,
        ),
        Message(ROLE_USER, "…", NOW - timedelta(hours=3), summary=_summary("-")),
        Message(
            ROLE_USER, "…", NOW - timedelta(hours=2), summary=_summary("買牛奶；寄合約給王經理")
        ),
        Message(ROLE_USER, "no summary here", NOW - timedelta(hours=1)),
    ]
    assert todos_from(messages, NOW - timedelta(days=7)) == [
        "買牛奶",
        "寄合約給王經理",
        "訂搬家公司",
    ]


def test_briefing_gathers_todays_reminders_todos_short_term_and_fading_memories(
    services: Services,
) -> None:
    clock = [NOW - timedelta(hours=1)]
    reminders = ReminderService(
        ReminderStore(services.state),
        default_zone="Asia/Taipei",
        clock=lambda: clock[0],
        acts=MINT.check,
    )
    for phrase in (
        "今天下午六點 去接小孩",
        "明天九點 繳費",
        "每天晚上八點 吃藥",
        "今天中午 午餐會",
    ):
        row, _ = reminders.propose_phrase(USER, phrase)
        if "午餐" not in phrase:  # an unconfirmed proposal is not in the briefing
            reminders.confirm(act(USER, row.id), USER, row.id)
    clock[0] = NOW

    session = Session(USER)
    session.messages.append(
        Message(ROLE_USER, "…", NOW - timedelta(days=1), summary=_summary("寄合約給王經理"))
    )
    services.sessions.save(session)
    short = ShortTermStore(services.state)
    short.add(USER, "weather", "台北 晴 18-24°C", NOW - timedelta(hours=2))
    short.add(USER, "mail", "三天前的信", NOW - timedelta(days=3))
    short.add("telegram_7", "weather", "someone else's weather", NOW)
    services.memory.write_document(
        USER,
        MemoryDocument(
            sections=("General",),
            entries=(
                Entry(id="m-fresh", text="我昨天開始學吉他", created_at=_iso(1)),
                Entry(id="m-faded", text="上個月去了一趟花蓮旅行", created_at=_iso(21)),
                Entry(
                    id="m-core", text="回答一律使用繁體中文", is_core=True, created_at=_iso(300)
                ),
                Entry(id="m-arch", text="封存了", status="archived", created_at=_iso(90)),
            ),
        ),
    )
    builder = BriefingBuilder(
        reminders, services.sessions, short, services.memory, services.access, LifecycleConfig()
    )
    briefing = builder.build(USER)
    assert briefing.day == date(2026, 11, 22)
    assert [(f"{r.at:%H:%M}", r.text, r.recurring) for r in briefing.reminders] == [
        ("18:00", "去接小孩", False),
        ("20:00", "吃藥", True),
    ]
    assert briefing.todos == ("寄合約給王經理",)
    assert [r.content for r in briefing.short_term] == ["台北 晴 18-24°C"]
    assert [(f.entry_id, round(f.health, 3)) for f in briefing.fading] == [("m-faded", 0.266)]

    assert render_briefing(briefing, "zh") == (
        "早安！2026-11-22 的簡報\n\n今天的提醒\n• 18:00 去接小孩\n• 20:00 吃藥 ↻\n\n"
        "待辦\n• 寄合約給王經理\n\n最新資訊\n• [weather] 台北 晴 18-24°C\n\n"
        "快被遺忘的記憶\n• 上個月去了一趟花蓮旅行 (m-faded, 0.27)"
    )
    assert render_briefing(briefing, "en").startswith(
        "Good morning! Your briefing for 2026-11-22\n\nToday's reminders\n• 18:00 去接小孩"
    )
    assert render_briefing(builder.build("telegram_7"), "en") == (
        "Good morning! Your briefing for 2026-11-22\n\nLatest notes\n"
        "• [weather] someone else's weather"
    )
    assert render_briefing(builder.build("telegram_8"), "zh").endswith("今天沒有要報告的事。")
