"""Governance from chat (issue 13): pin, scope, edit, archived/restore, Replace, keep.

The real Application on the offline Bot API, over the real backend (``backend_for``): the
confirmation service, the curation adapter with the process's mint, real MEMORY.md.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from telegram import Update

from bot.app import Services
from bot.fading import fading_job, telegram_offer
from bot.frontdesk.backend import backend_for
from bot.telegram.application import build_application
from bot.telegram.context import DEPS, REVISE_WINDOW, BotApp
from memory.base.markdown import Entry
from tests.bot.conftest import OWNER
from tests.bot.offers import offer
from tests.bot.telegram_doubles import RecordingRequest, Updates, bot_message

KEY = f"telegram_{OWNER}"


class Bot:
    """The Application over the real services, and the recorded Bot API."""

    def __init__(self, app: BotApp, api: RecordingRequest) -> None:
        self.app, self.api, self.updates = app, api, Updates()

    async def send(self, text: str, **kw: Any) -> None:
        kw.setdefault("lang", "en")
        await self.app.process_update(self.updates.message(self.app.bot, OWNER, text, **kw))

    async def press(self, data: str, message_id: int = 1) -> None:
        await self.app.process_update(
            self.updates.button(self.app.bot, OWNER, data, message_id, "en")
        )

    def last(self) -> str:
        return self.api.texts()[-1]

    def keyboard(self, index: int = -1) -> list[list[dict[str, str]]]:
        marked = [p for p in self.api.named("sendMessage") if p.get("reply_markup")]
        markup = marked[index]["reply_markup"]
        markup = json.loads(markup) if isinstance(markup, str) else markup
        return list(markup["inline_keyboard"])

    def callbacks(self, index: int = -1) -> list[str]:
        return [b["callback_data"] for row in self.keyboard(index) for b in row]


@pytest.fixture
async def bot(services: Services) -> AsyncIterator[Bot]:
    settings = replace(services.settings, telegram_bot_token="123:TEST", allowed_users=(OWNER,))
    api = RecordingRequest()
    app = build_application(settings, backend_for(services), request=api)
    await app.initialize()
    yield Bot(app, api)
    await app.shutdown()


def _entries(services: Services) -> dict[str, Entry]:
    return {e.id: e for e in services.memory.entries(KEY)}


async def test_pin_unpin_and_scope_commands(bot: Bot, services: Services) -> None:
    e = services.memory.remember(KEY, "Answer in Traditional Chinese")
    await bot.send(f"/pin {e.id}")
    assert bot.last().startswith("📌 Pinned") and _entries(services)[e.id].is_core
    await bot.send("/memory")
    assert "📌" in bot.last() and f"mm:u:{e.id}" in bot.callbacks()  # pinned: 📍 unpins
    await bot.send(f"/unpin {e.id}")
    assert not _entries(services)[e.id].is_core
    await bot.send(f"/scope {e.id} lang:python")
    assert bot.last() == "🏷 Scope is now lang:python: Answer in Traditional Chinese"
    await bot.send(f"/scope {e.id} somewhere")
    assert "scope" in bot.last().lower() and _entries(services)[e.id].scope == "lang:python"
    await bot.send("/pin m-nope")
    assert bot.last() == "No memory 'm-nope' of yours."  # one language: the person's
    await bot.send("/pin")
    assert bot.last().startswith("Usage: /pin")


async def test_memory_buttons_pin_edit_and_forget(bot: Bot, services: Services) -> None:
    tea = services.memory.remember(KEY, "I drink oolong tea every morning")
    cat = services.memory.remember(KEY, "My cat is called Mochi")
    await bot.send("/memory")
    assert bot.last().splitlines()[0].startswith(f"1. {tea.id}")
    rows = bot.keyboard()
    assert [[b["callback_data"] for b in row] for row in rows] == [
        [f"mm:p:{tea.id}", f"mm:e:{tea.id}", f"mm:f:{tea.id}"],
        [f"mm:p:{cat.id}", f"mm:e:{cat.id}", f"mm:f:{cat.id}"],
    ]
    await bot.press(f"mm:p:{tea.id}")
    assert _entries(services)[tea.id].is_core and bot.last().startswith("📌 Pinned")

    await bot.press(f"mm:e:{tea.id}")
    prompt = bot.api.named("sendMessage")[-1]
    assert tea.id in prompt["text"] and "force_reply" in str(prompt["reply_markup"])
    await bot.send("I drink black coffee every morning")
    entries = _entries(services)
    new = next(e for e in entries.values() if e.supersedes == (tea.id,))
    assert new.text == "I drink black coffee every morning" and new.is_core  # pin carried
    assert entries[tea.id].status == "deprecated"
    assert bot.last().startswith(f"✏️ Edited ({new.id} replaces {tea.id})")

    await bot.press(f"mm:f:{cat.id}")
    assert cat.id not in _entries(services) and "Forgot" in bot.last()


async def test_edit_command_and_the_chain_in_history(bot: Bot, services: Services) -> None:
    old = services.memory.remember(KEY, "My dentist is Dr. Lin")
    await bot.send(f"/edit {old.id} My dentist is Dr. Chen at Da'an clinic")
    [new] = [e for e in _entries(services).values() if e.supersedes == (old.id,)]
    await bot.send(f"/history {new.id}")
    lines = bot.last().splitlines()
    assert [ln.split("] ")[0].split(" [")[-1] for ln in lines] == ["deprecated", "active"]
    assert "Dr. Lin" in lines[0] and f"Dr. Chen at Da'an clinic  (← {old.id})" in lines[1]
    await bot.send(f"/edit {old.id} My dentist is Dr. Wu")  # the replaced version
    assert f"replaced by {new.id}" in bot.last()
    await bot.send(f"/edit {new.id} my api key is sk-proj-abcdefghijklmnopqrstuvwxyz123456")
    assert "API" in bot.last() and len(_entries(services)) == 2  # the guard refused it
    await bot.send(f"/edit {new.id}")
    assert bot.last().startswith("Usage: /edit")


async def test_archived_and_restore(bot: Bot, services: Services) -> None:
    e = services.memory.remember(KEY, "I visited Kyoto in 2019")
    await bot.send("/archived")
    assert bot.last() == "No archived memories."
    services.governance.set_status(KEY, e.id, "archived", now=datetime.now(UTC), reason="t")
    await bot.send("/memory")
    assert bot.last() == "No memories yet. Use /remember."
    await bot.send("/archived")
    assert e.id in bot.last() and "Kyoto" in bot.last()
    await bot.send(f"/restore {e.id}")
    assert bot.last().startswith("♻️ Restored") and _entries(services)[e.id].status == "active"


async def test_a_conflict_offers_replace_and_replace_supersedes(
    bot: Bot, services: Services
) -> None:
    old = services.memory.remember(KEY, "我喜歡藍色")
    await bot.send("/remember 我喜歡綠色")
    data = bot.callbacks()
    assert [d.split(":")[1] for d in data] == ["c", "r", "e", "d"]
    assert [b["text"] for b in bot.keyboard()[0]][:2] == ["➕ 新增", "🔁 取代"]  # they wrote zh
    await bot.press(data[1])
    entries = _entries(services)
    new = next(e for e in entries.values() if e.id != old.id)
    assert new.supersedes == (old.id,) and entries[old.id].status == "deprecated"
    # the press answers in the same language, though the client says English
    assert f"（取代 {old.id}）" in bot.api.named("editMessageText")[-1]["text"]


async def test_a_proposal_without_conflict_keeps_three_buttons_and_shows_weight(
    bot: Bot, services: Services
) -> None:
    await offer(bot.app, services, OWNER, "this is important: I am allergic to peanuts")
    text = bot.api.named("sendMessage")[-1]["text"]
    assert "I am allergic to peanuts" in text and "⭐ weight 8/10" in text
    assert "important" not in text.split("\n")[2]
    assert [d.split(":")[1] for d in bot.callbacks()] == ["c", "e", "d"]
    await bot.press(bot.callbacks()[0])
    [entry] = _entries(services).values()
    assert entry.user_weight == 8


async def test_the_fading_notice_has_keep_buttons_and_keep_is_recorded(
    bot: Bot, services: Services
) -> None:
    now = datetime.now(UTC)
    old = (now - timedelta(days=90)).isoformat(timespec="seconds")
    e = services.memory.remember(KEY, "I once tried durian ice cream")
    doc = services.memory.document(KEY)
    services.memory.write_document(KEY, doc.with_entry(replace(e, created_at=old)))
    services.memory.remember("cli_ann", "Ann's old note", now=now - timedelta(days=90))

    detail = await fading_job(services, now, offer=telegram_offer(bot.app))
    assert detail == "1 fading memories told to 1 users"  # cli_ann is not reachable here
    notice = bot.api.named("sendMessage")[-1]
    assert int(notice["chat_id"]) == OWNER and "durian" in notice["text"]
    assert f"/keep {e.id}" in notice["text"] and bot.callbacks() == [f"mm:k:{e.id}"]
    assert services.lifecycle.fades is not None
    assert list(services.lifecycle.fades.told_at(KEY)) == [e.id]
    assert services.lifecycle.fades.told_at("cli_ann") == {}
    assert await fading_job(services, now, offer=telegram_offer(bot.app)) == (
        "0 fading memories told to 0 users"  # told once, not every run
    )

    await bot.press(f"mm:k:{e.id}")
    kept = _entries(services)[e.id]
    assert kept.refreshed_at and kept.user_weight == 6
    assert kept.history[-1].endswith("kept by the user") and bot.last().startswith("✅")
    assert services.lifecycle.to_tell(KEY, now) == []
    changes = services.lifecycle.run_lifecycle(now + timedelta(days=8)).changes
    assert e.id not in [c.entry_id for c in changes if c.new == "archived"]


async def test_the_edit_prompt_takes_one_message_through_the_guards(
    bot: Bot, services: Services
) -> None:
    e = services.memory.remember(KEY, "My locker number is 12")
    await bot.press(f"mm:e:{e.id}")
    await bot.send("hi", reply_to=bot_message(5, OWNER))
    assert "Not saved" in bot.last() and list(_entries(services)) == [e.id]  # noise refused
    await bot.send("My locker number is 14")  # the edit state is over: ordinary chat now
    assert list(_entries(services)) == [e.id]


async def test_an_old_edit_prompt_no_longer_takes_the_next_message(
    bot: Bot, services: Services
) -> None:
    e = services.memory.remember(KEY, "My locker number is 12")
    await bot.press(f"mm:e:{e.id}")
    deps = bot.app.bot_data[DEPS]
    entry_id, pressed = deps.awaiting_revise[KEY]
    deps.awaiting_revise[KEY] = (entry_id, pressed - REVISE_WINDOW - 1)  # ten minutes later
    await bot.send("My locker number is 14 now")  # goes to the agent, edits nothing
    assert list(_entries(services)) == [e.id] and KEY not in deps.awaiting_revise


async def test_memory_buttons_do_nothing_in_a_group(bot: Bot, services: Services) -> None:
    e = services.memory.remember(KEY, "My locker number is 12")
    deps = bot.app.bot_data[DEPS]
    deps.settings = replace(deps.settings, groups=True)  # past the gate: the handler decides
    update = bot.updates.button(bot.app.bot, OWNER, f"mm:p:{e.id}", 3, "en")
    data = update.to_dict()
    data["callback_query"]["message"]["chat"] = {"id": -100123, "type": "group", "title": "G"}
    await bot.app.process_update(Update.de_json(data, bot.app.bot))
    assert not _entries(services)[e.id].is_core
    assert bot.api.named("sendMessage") == []
    [answer] = bot.api.named("answerCallbackQuery")
    assert "private chat" in answer["text"]
