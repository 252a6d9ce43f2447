"""Reminder proposals wait where memory proposals do (/pending, /stats, "which one?"); /tz."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.reminders import store as rs
from bot.app import Services
from tests.bot.conftest import OWNER
from tests.bot.telegram_doubles import bot_message
from tests.bot.test_telegram_reminders import KEY, Bot, _start, _stop


@pytest.fixture
async def bot(services: Services) -> AsyncIterator[Bot]:
    """The bot with reminders wired, no model (every line here is a command or a word)."""
    started = await _start(services)
    yield started
    await _stop(started)


async def test_pending_and_stats_show_reminder_proposals(bot: Bot) -> None:
    await bot.offer_reminder(OWNER, "tomorrow 9am call mom")
    [row] = bot.service.store.of_user(KEY, (rs.PROPOSED,))
    before = len(bot.api.sent)
    await bot.send(OWNER, "/pending")
    shown = [p for _, p in bot.api.sent[before:]]
    assert "Nothing is waiting" not in str(shown)
    [card] = [p for p in shown if "call mom" in str(p.get("text"))]
    data = [b["callback_data"] for r in card["reply_markup"]["inline_keyboard"] for b in r]
    assert data == [f"rm:c:{row.id}", f"rm:d:{row.id}"]
    await bot.send(OWNER, "/stats")
    assert "pending reminders: 0 (+1 waiting for your yes)" in bot.api.texts()[-1]


async def test_a_bare_yes_with_three_waiting_asks_which(bot: Bot) -> None:
    for text in ("tea", "water", "stretch"):
        await bot.offer_reminder(OWNER, f"in 10 minutes {text}")
    await bot.send(OWNER, "yes")
    assert bot.service.store.of_user(KEY, (rs.SCHEDULED,)) == []  # nothing decided
    assert len(bot.service.store.of_user(KEY, (rs.PROPOSED,))) == 3
    texts = bot.api.texts()
    asked = next(i for i, t in enumerate(texts) if "which one do you mean" in t)
    assert sum("Set this reminder?" in t for t in texts[asked:]) == 3  # shown again
    mid, _, _ = bot.card("water")
    await bot.send(OWNER, "yes", reply_to=bot_message(mid, OWNER))  # a reply names it
    [done] = bot.service.store.of_user(KEY, (rs.SCHEDULED,))
    assert done.text == "water"


async def test_tz_says_what_happens_to_the_reminders_and_the_list_names_the_zone(
    bot: Bot,
) -> None:
    await bot.send(OWNER, "/remind tomorrow 9am call mom")  # typed: set at once
    await bot.send(OWNER, "/tz Asia/Tokyo")
    assert bot.api.texts()[-1] == (
        "🌐 Time zone set to Asia/Tokyo. Your 1 reminder(s) keep their clock times, now in "
        "Asia/Tokyo (09:00 stays 09:00)."
    )
    await bot.send(OWNER, "/reminders")
    assert "09:00 (Asia/Tokyo) call mom" in bot.api.texts()[-1]
