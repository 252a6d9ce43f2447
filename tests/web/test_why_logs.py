"""The page form of /why, and the daily logs and summaries, browsable and searchable."""

from __future__ import annotations

from datetime import datetime

from agent.types import InjectedMemory
from agent.why import WhyLog
from memory.base.fsutil import atomic_write_text
from tests.web.conftest import Page

ALICE = "telegram_111"


def test_why_shows_what_shaped_each_recent_reply(page: Page) -> None:
    entry_id = page.remember(ALICE, "我對花生過敏")
    log = WhyLog(page.services.state)
    earlier = datetime(2026, 11, 21, 18, 5).astimezone()
    log.record(ALICE, [InjectedMemory("m-gone", "L2", 0.52, "週末去了淡水", "MEMORY.md")], earlier)
    used = [
        InjectedMemory(entry_id, "L0", 0.9, "我對花生過敏", "MEMORY.md"),
        InjectedMemory("", "L2", 0.41, "昨天聊到泰國菜", "memory/2026-11-21.md"),
    ]
    log.record(ALICE, used, datetime(2026, 11, 22, 12, 30).astimezone())
    html = page.login(ALICE).get("/why").text
    assert html.index("2026-11-22 12:30") < html.index("2026-11-21 18:05")  # newest first
    assert f'<a href="/m/{entry_id}">我對花生過敏</a>' in html
    assert "L0" in html and "0.90" in html and "0.41" in html and "昨天聊到泰國菜" in html
    assert "<span>週末去了淡水</span>" in html  # no such entry any more: no link
    bob_view = page.login("telegram_222").get("/why").text
    assert "花生" not in bob_view and "No memories shaped your recent replies." in bob_view


def test_daily_logs_and_summaries_are_browsable_and_searchable(page: Page) -> None:
    when = datetime(2026, 11, 21, 9, 30).astimezone()
    page.services.daily_log.append(ALICE, "user", "今天去了永康街買手沖咖啡豆", when, "tg-1")
    page.services.daily_log.append(ALICE, "assistant", "Nice, which roast?", when, "tg-2")
    summaries = page.services.memory.paths(ALICE).auto_summaries_md
    atomic_write_text(summaries, "## 2026-11-21 10:30\n\n聊了咖啡豆的烘焙度。\n")
    page.services.memory.indexer.sync_user(ALICE, force=True)
    client = page.login(ALICE)
    index = client.get("/logs").text
    assert '<a href="/logs/2026-11-21">2026-11-21</a>' in index
    assert "auto_summaries.md" in index and "聊了咖啡豆的烘焙度" in index
    assert "<summary>Summaries after a pause</summary>" in index  # the file's name in words
    day = client.get("/logs/2026-11-21").text
    assert day.index("永康街") < day.index("Nice, which roast?")
    found = client.get("/logs", params={"q": "咖啡豆"}).text.split("<h2>Daily logs")[0]
    assert "you: 今天去了永康街" in found and "user: " not in found  # who, in plain words
    assert client.get("/logs/2026-11-20").status_code == 404
    assert client.get("/logs/..%2F..%2Fpcai").status_code == 404


def test_why_shows_the_question_each_reply_answered(page: Page) -> None:
    asked_at = datetime(2026, 11, 22, 12, 30).astimezone()
    session = page.services.sessions.load(ALICE)
    session.append("user", "晚餐可以吃花生醬麵嗎？", asked_at)
    session.append("assistant", "不行，你對花生過敏。", asked_at)
    page.services.sessions.save(session)
    used = [InjectedMemory("", "L0", 0.9, "我對花生過敏", "MEMORY.md")]
    WhyLog(page.services.state).record(ALICE, used, asked_at)
    html = page.login(ALICE).get("/why").text
    assert '<span class="who">You:</span> <q>晚餐可以吃花生醬麵嗎？</q>' in html


def test_why_still_shows_the_question_once_the_session_was_compacted(page: Page) -> None:
    asked_at = datetime(2026, 11, 22, 12, 30, 5).astimezone()
    # A compaction trimmed the message from the session; the daily log keeps every message.
    log = page.services.daily_log
    log.append(ALICE, "assistant", "（提醒）該吃午餐了", asked_at)  # the same second, not asked
    log.append_user_message(ALICE, "我可以吃花生醬嗎？", asked_at, "tg-7")
    used = [InjectedMemory("", "L0", 0.9, "我對花生過敏", "MEMORY.md")]
    WhyLog(page.services.state).record(ALICE, used, asked_at)
    html = page.login(ALICE).get("/why").text
    assert '<span class="who">You:</span> <q>我可以吃花生醬嗎？</q>' in html


def test_why_labels_each_message_by_who_said_it_and_shows_the_overview_as_a_list(
    page: Page,
) -> None:
    asked_at = datetime(2026, 11, 22, 12, 30).astimezone()
    session = page.services.sessions.load(ALICE)
    session.append("user", "What should I cook tonight?", asked_at)
    session.append("assistant", "How about the peanut-free pad thai?", asked_at)
    page.services.sessions.save(session)
    overview = (
        "## 個人 Personal\n- I am allergic to peanuts\n\n## 偏好 Preferences\n- I like Thai food"
    )
    used = [
        InjectedMemory("MEMORY.md", "fallback", 0.0, overview, "MEMORY.md"),
        InjectedMemory("", "L2", 0.4, "assistant: Try the green curry", "memory/2026-11-21.md"),
        InjectedMemory("", "L2", 0.3, "user: I loved that curry", "memory/2026-11-21.md"),
        InjectedMemory("m-1", "L2", 0.3, "I cook on Sundays", "MEMORY.md § 個人 Personal"),
    ]
    WhyLog(page.services.state).record(ALICE, used, asked_at)
    html = page.login(ALICE).get("/why").text
    assert '<span class="who">You:</span> <q>What should I cook tonight?</q>' in html
    assert '<span class="who">PCAI:</span> <q>How about the peanut-free pad thai?</q>' in html
    assert "PCAI: Try the green curry" in html and "you: I loved that curry" in html
    # the overview as a list under the reader's half of each section name, not Markdown
    assert "<h3>Personal</h3><ul><li>I am allergic to peanuts</li></ul>" in html
    assert "<h3>Preferences</h3>" in html and "## " not in html.split("<details")[0]
    assert "your memories › Personal" in html and "個人" not in html.split("<details")[0]
    zh = page.login(ALICE, lang="zh").get("/why").text
    assert '<span class="who">你：</span>' in zh and "<h3>個人</h3>" in zh
    assert "Personal" not in zh.split("<details")[0]
