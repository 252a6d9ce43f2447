"""Drafts while the reply is written (bot/telegram/streaming.py), against the Telegram stand-in."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from telegram import Bot

from bot.telegram.streaming import DraftStream
from tests.fakes.telegram_server import FakeTelegram

TOKEN = "123456:TEST"
ALICE = 1001


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with FakeTelegram() as server:
        yield server


@pytest.fixture
async def bot(tg: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, base_url=f"{tg.url}/bot", base_file_url=f"{tg.url}/file/bot") as b:
        yield b


def drafts(tg: FakeTelegram) -> list[dict[str, Any]]:
    """The sendMessageDraft calls the stand-in answered, oldest first."""
    return [c for c in tg.calls if c["method"].lower() == "sendmessagedraft"]


class CallTimes:
    """The real bot, noting when the stream calls ``sendMessageDraft`` (what the throttle rules).

    The stand-in's receipt times carry the HTTP round trip's jitter, which on a loaded machine
    can bring two drafts sent 0.4 s apart closer than that; the throttle governs the calls.
    """

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.times: list[float] = []

    async def send_message_draft(self, chat_id: int, draft_id: int, text: str) -> bool:
        self.times.append(time.monotonic())
        return await self.bot.send_message_draft(chat_id, draft_id, text)


async def test_drafts_are_throttled_and_carry_the_newest_text(tg: FakeTelegram, bot: Bot) -> None:
    calls = CallTimes(bot)
    stream = DraftStream(calls, ALICE, 42, every=0.4)  # type: ignore[arg-type]
    text = ""
    for i in range(30):  # the model writes for ~1.2 s, a piece every 40 ms
        text += f"第{i}句。"
        await stream(text)
        await asyncio.sleep(0.04)
    await asyncio.sleep(0.5)  # the throttle's last draft goes out
    await stream.close()
    sent = drafts(tg)
    assert 2 <= len(sent) <= 5  # not 30: at most one per 0.4 s
    assert len(calls.times) == len(sent)
    assert all(b - a >= 0.399 for a, b in itertools.pairwise(calls.times))
    assert sent[-1]["params"]["text"] == text  # the newest text, not a stale one
    assert {c["params"]["draft_id"] for c in sent} == {42}


async def test_a_429_is_waited_out_as_told(tg: FakeTelegram, bot: Bot) -> None:
    tg.draft_retry_after = 1
    stream = DraftStream(bot, ALICE, 7, every=0.1)
    await stream("第一句話已經寫好了。")
    await asyncio.sleep(0.05)
    await stream("第一句話已經寫好了。第二句也是。")
    await asyncio.sleep(1.4)
    await stream.close()
    calls = drafts(tg)
    assert len(calls) == 2  # the refused one, then one after the wait
    assert calls[1]["time"] - calls[0]["time"] >= 950
    assert stream.sent == ["第一句話已經寫好了。第二句也是。"]


async def test_where_drafts_are_refused_it_stops_trying(tg: FakeTelegram, bot: Bot) -> None:
    stream = DraftStream(bot, -100123, 1, every=0.05)  # a group: drafts are refused
    await stream("hello there")
    await asyncio.sleep(0.2)
    await stream("hello there, more")
    await asyncio.sleep(0.2)
    await stream.close()
    assert stream.refused and len(drafts(tg)) == 1 and stream.sent == []


async def test_a_tool_round_shows_the_thinking_placeholder(tg: FakeTelegram, bot: Bot) -> None:
    stream = DraftStream(bot, ALICE, 3, every=0.05)
    await stream("Let me look that up for you in your notes.")
    await asyncio.sleep(0.1)
    await stream("")  # the agent's stream took the text back: a tool round began
    await asyncio.sleep(0.1)
    await stream.close()
    assert [c["params"].get("text", "") for c in drafts(tg)][-1] == ""
