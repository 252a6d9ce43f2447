"""/history by meaning, and the topic index's topic and prune advice in /stats (real backend)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone

import pytest

from bot.app import Services
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from bot.frontdesk.reminder_desk import reminder_desk_for
from bot.telegram.application import build_application
from history.topic_index import TopicIndex
from tests.bot.conftest import OWNER, Harness, make_harness

USER = f"telegram_{OWNER}"
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone(timedelta(hours=8)))


@pytest.fixture
async def real(services: Services) -> AsyncIterator[Harness]:
    """The Telegram Application over the real backend (not the stand-in)."""
    tg = await make_harness(services)
    await tg.app.shutdown()
    tg.app = build_application(
        tg.app.bot_data["deps"].settings, backend_for(services), request=tg.api
    )
    await tg.app.initialize()
    yield tg
    await tg.app.shutdown()


def _a_week_of_talk(services: Services, user: str) -> None:
    """The person talked on seven days (their daily logs): advice on unused sections is due."""
    logs = services.memory.paths(user).log_dir
    logs.mkdir(parents=True, exist_ok=True)
    for day in range(1, 8):
        (logs / f"2026-10-{day:02d}.md").write_text("", encoding="utf-8")


def _replace_latte(services: Services, user: str) -> tuple[str, str]:
    """我喜歡喝拿鐵咖啡 (drink_preference), then replaced by a version without 咖啡."""
    ids = []
    for text, replace, day in (("我喜歡喝拿鐵咖啡", False, 0), ("我現在只喝綠茶", True, 2)):
        now = T0 + timedelta(days=day)
        p = services.confirm.propose(
            user, text, now=now, fields={"canonical_topic": "drink_preference"}
        )
        act = services.user_acts.act(user, p.id, "replace" if replace else "confirm", via="reply")
        ids.append(services.confirm.confirm(act, now=now).id)
    return ids[0], ids[1]


async def test_history_finds_the_chain_by_a_word(real: Harness, services: Services) -> None:
    old, new = _replace_latte(services, USER)
    await real.send(OWNER, "/history 咖啡")  # the help's own example
    text = real.api.texts()[-1]
    assert "咖啡 → drink_preference" in text
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if old in line)
    second = next(i for i, line in enumerate(lines) if line.strip().startswith("↳"))
    assert first < second  # oldest version first, the replacement after it
    # each version's status in the reader's words (they wrote Chinese)
    assert "[已被取代]" in lines[first] and "我喜歡喝拿鐵咖啡" in lines[first]
    assert f"[使用中] {new}: 我現在只喝綠茶" in lines[second] and old in lines[second]
    await real.send(OWNER, "/history 天氣預報")
    assert "沒有關於「天氣預報」的記憶" in real.api.texts()[-1]


async def test_stats_show_the_topic_and_the_sections_to_prune(
    real: Harness, services: Services
) -> None:
    topics = TopicIndex(services.settings.data_dir, services.settings.topic_index)
    _a_week_of_talk(services, USER)
    known = ["偏好 Preferences", "工作 Work"]
    for i in range(4):
        topics.record(
            USER,
            ["偏好 Preferences"],
            T0 + timedelta(minutes=i),
            known,
            summaries={"偏好 Preferences": "我喜歡喝拿鐵咖啡"},
        )
    await real.send(OWNER, "/stats")
    stats = real.api.texts()[-1]
    assert "topic: Preferences (100% / 4 turns): 我喜歡喝拿鐵咖啡" in stats  # one language
    assert "unused sections: Work — unused for several turns" in stats
    assert "當前主題" not in stats and "少用" not in stats
    topic_md = services.memory.paths(USER).memory_topic_md.read_text("utf-8")
    assert "偏好 Preferences" in topic_md and "我喜歡喝拿鐵咖啡" in topic_md


async def test_the_terminal_chat_shows_the_same(services: Services) -> None:
    user = "cli_ann"
    _replace_latte(services, user)
    topics = TopicIndex(services.settings.data_dir, services.settings.topic_index)
    _a_week_of_talk(services, user)
    for i in range(3):  # three turns that used no section: 工作 Work is missed three times
        topics.record(user, [], T0 + timedelta(minutes=i), ["工作 Work"])
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), user, out=out)
    await chat.handle("/history 咖啡")
    await chat.handle("/stats")
    printed = out.getvalue()
    assert "咖啡 → drink_preference" in printed and "我現在只喝綠茶" in printed
    assert "少用的區塊: 工作 — 連續多輪沒用到" in printed  # they wrote Chinese: Chinese


async def test_day_one_stats_count_set_reminders_and_suggest_no_pruning(
    services: Services,
) -> None:
    user = "cli_ann"
    out = io.StringIO()
    desk = reminder_desk_for(services)
    chat = TerminalChat(backend_for(services), user, out=out, reminders=desk)
    await chat.handle("/remind in 30 minutes call mom")
    await chat.handle("/remind in 2 hours water the plants")
    topics = TopicIndex(services.settings.data_dir, services.settings.topic_index)
    for i in range(5):  # the first turns of day one use 偏好 only: 個人 Personal is "missed"
        topics.record(user, ["偏好 Preferences"], T0 + timedelta(minutes=i), ["個人 Personal"])
    mark = len(out.getvalue())
    await chat.handle("/stats")
    stats = out.getvalue()[mark:]
    assert "pending reminders: 2\n" in stats  # was 0: only proposals were counted
    assert "unused sections" not in stats and "Personal" not in stats
    assert topics.overview(user).prune == ()  # the page's advice too
