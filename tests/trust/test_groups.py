"""Promise 4, attacked: a group never sees private data, and an edit never starts a turn.

The real Application (PTB 22) with the real agent, the real services on a temporary data dir,
a recording Bot API (``tests/bot/telegram_doubles.py``) and the fake Ollama on 127.0.0.1.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from telegram import Update

from agent.ollama_client import OllamaEmbedder
from bot.app import Services, build_agent, build_services
from bot.frontdesk.backend import backend_for
from bot.settings import load_settings
from bot.telegram.application import build_application
from bot.telegram.context import BotApp
from memory.state.short_term import ShortTermStore
from tests.bot.telegram_doubles import BOT, RecordingRequest, Updates
from tests.fakes.ollama_server import FakeOllama

OWNER, FRIEND = 1001, 1002
GROUP, OTHER_GROUP = -1001234, -1005678
PRIVATE_CHAT = "我的秘密計畫代號 PRIVATEPLAN 只跟你說"
PRIVATE_MEMORY = "我的血型是 AB 型 PRIVATEMEMO"
PRIVATE_SHORT = "明天早上九點看牙醫 PRIVATESHORT"
SECRETS = ("PRIVATEPLAN", "PRIVATEMEMO", "PRIVATESHORT")


@dataclass
class World:
    """The bot with the real agent, its recorded Bot API, the fake model and the services."""

    app: BotApp
    api: RecordingRequest
    fake: FakeOllama
    services: Services
    updates: Updates

    @property
    def data(self) -> Path:
        """The data dir."""
        return self.services.settings.data_dir

    async def send(self, user: int, text: str, **kw: Any) -> Update:
        """One message from ``user`` through the Application; returns the Update sent."""
        kw.setdefault("lang", "zh")
        update = self.updates.message(self.app.bot, user, text, **kw)
        await self.app.process_update(update)
        return update

    async def edit(self, original: Update, new_text: str) -> None:
        """Telegram's ``edited_message`` update for ``original`` with ``new_text``."""
        assert original.message is not None
        msg = original.message.to_dict()
        msg.update(text=new_text, edit_date=int(time.time()))
        if new_text.startswith("/"):
            msg["entities"] = [
                {"type": "bot_command", "offset": 0, "length": len(new_text.split()[0])}
            ]
        self.updates.update_id += 1
        update = Update.de_json(
            {"update_id": self.updates.update_id, "edited_message": msg}, self.app.bot
        )
        await self.app.process_update(update)

    def prompt(self, request: dict[str, Any]) -> str:
        """Everything one chat request showed the model."""
        return "\n".join(str(m.get("content", "")) for m in request["messages"])

    def sent(self) -> list[dict[str, Any]]:
        """Every sendMessage the bot made."""
        return self.api.named("sendMessage")

    def files_text(self) -> str:
        """The text of every file under the data dir (SQLite files as raw bytes)."""
        out = []
        for path in sorted(self.data.rglob("*")):
            if path.is_file():
                out.append(f"== {path.relative_to(self.data)}\n")
                out.append(path.read_bytes().decode("utf-8", "replace"))
        return "".join(out)


@pytest.fixture
async def world(tmp_path: Path, fake_ollama: FakeOllama) -> AsyncIterator[World]:
    """Groups on, OWNER and FRIEND allowed, the real agent answering through the fake."""
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "OLLAMA_HOST": fake_ollama.url,
            "PCAI_EMBEDDER": "ollama",
            "PCAI_GROUPS": "true",
            "PCAI_ALLOWED_USERS": f"{OWNER},{FRIEND}",
            "TELEGRAM_BOT_TOKEN": "123:TEST",
        }
    )
    embedder = OllamaEmbedder(fake_ollama.url, settings.embed_model, dim=fake_ollama.dim)
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    build_agent(services)
    api = RecordingRequest()
    app = build_application(settings, backend_for(services), request=api)
    await app.initialize()
    yield World(app, api, fake_ollama, services, Updates())
    await app.shutdown()
    services.close()


async def _owner_has_a_private_life(w: World) -> None:
    """A private chat, a confirmed memory and a short-term note, all the owner's."""
    w.services.memory.remember(f"telegram_{OWNER}", PRIVATE_MEMORY)
    ShortTermStore(w.services.state).add(
        f"telegram_{OWNER}", "calendar", PRIVATE_SHORT, datetime.now().astimezone()
    )
    await w.send(OWNER, PRIVATE_CHAT)
    await w.send(OWNER, "我的行事曆和血型你都記得嗎？")
    # The private turns really do see all three (so their absence below means something).
    private_prompt = w.prompt(w.fake.chat_requests[-1])
    assert "PRIVATEPLAN" in private_prompt
    assert "PRIVATEMEMO" in private_prompt and "PRIVATESHORT" in private_prompt


async def test_a_group_turn_sees_no_private_history_memory_or_tools(world: World) -> None:
    await _owner_has_a_private_life(world)
    before = len(world.fake.chat_requests)

    await world.send(
        OWNER, "@TestNameBot 我的行事曆、血型和計畫是什麼？", chat_type="group", chat_id=GROUP
    )

    [request] = world.fake.chat_requests[before:]
    prompt = world.prompt(request)
    assert "行事曆、血型和計畫" in prompt  # it is the group turn's prompt
    for secret in SECRETS:
        assert secret not in prompt
    assert not request.get("tools")
    assert world.sent()[-1]["chat_id"] == GROUP


async def test_each_group_has_its_own_session_and_the_private_one_stays_clean(
    world: World,
) -> None:
    await _owner_has_a_private_life(world)
    await world.send(OWNER, "@TestNameBot 群組話題 GROUPONE", chat_type="group", chat_id=GROUP)
    await world.send(
        FRIEND, "@TestNameBot 另一個群 GROUPTWO", chat_type="group", chat_id=OTHER_GROUP
    )
    await world.send(FRIEND, "@TestNameBot 我們剛剛聊什麼？", chat_type="group", chat_id=GROUP)
    group_prompt = world.prompt(world.fake.chat_requests[-1])
    # The group remembers its own conversation (another member spoke first), nothing else.
    assert "GROUPONE" in group_prompt and "GROUPTWO" not in group_prompt
    assert not any(secret in group_prompt for secret in SECRETS)

    await world.send(OWNER, "回到私聊")
    private_prompt = world.prompt(world.fake.chat_requests[-1])
    assert "PRIVATEPLAN" in private_prompt and "GROUPONE" not in private_prompt

    # The idle job summarises the private talk only: a group's talk is nobody's memory.
    made = await world.services.idle.run(datetime.now().astimezone() + timedelta(hours=3))
    assert [r.session_id for r in made] == [f"telegram_{OWNER}"]

    # Nothing from a group reached any user's files: sessions, daily logs, summaries, topics.
    users = world.data / "users"
    for path in users.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert "GROUPONE" not in text and "GROUPTWO" not in text, path
    private = world.services.sessions.load(f"telegram_{OWNER}")
    assert not any("GROUP" in m.content for m in private.messages)
    assert not [p for p in users.iterdir() if "group" in p.name]


async def test_an_edited_message_starts_no_second_turn(world: World) -> None:
    original = await world.send(OWNER, "今天天氣不錯")
    asked, sent = len(world.fake.chat_requests), len(world.sent())
    assert asked == 1 and sent == 1

    await world.edit(original, "今天天氣不錯，順便幫我想晚餐")

    assert len(world.fake.chat_requests) == asked
    assert len(world.sent()) == sent
    session = world.services.sessions.load(f"telegram_{OWNER}")
    assert [m.content for m in session.messages if m.role == "user"] == ["今天天氣不錯"]


async def test_an_edited_command_is_not_run_again(world: World) -> None:
    key = f"telegram_{OWNER}"
    original = await world.send(OWNER, "/remember 我喜歡喝凍頂烏龍茶")  # saved at once
    assert [e.text for e in world.services.memory.entries(key)] == ["我喜歡喝凍頂烏龍茶"]
    sent = len(world.sent())

    await world.edit(original, "/remember 我喜歡喝東方美人茶")

    assert [e.text for e in world.services.memory.entries(key)] == ["我喜歡喝凍頂烏龍茶"]
    assert world.services.confirm.pending(key) == []
    assert len(world.sent()) == sent


async def test_an_edited_group_message_not_addressed_to_the_bot_gets_no_answer(
    world: World,
) -> None:
    original = await world.send(OWNER, "大家晚上吃什麼", chat_type="group", chat_id=GROUP)
    assert world.sent() == [] and world.fake.chat_requests == []

    await world.edit(original, "大家晚上吃什麼？我想吃拉麵")

    assert world.sent() == [] and world.fake.chat_requests == []
    assert not (world.data / "history").exists() or not any((world.data / "history").iterdir())


async def test_an_edit_that_adds_the_mention_is_still_not_a_turn(world: World) -> None:
    original = await world.send(OWNER, "有人知道嗎", chat_type="group", chat_id=GROUP)
    await world.edit(original, "@TestNameBot 有人知道嗎")
    reply_to_bot = {"message_id": 7, "date": 0, "chat": {"id": GROUP, "type": "group"}}
    reply_to_bot["from"] = BOT
    answered = await world.send(
        OWNER, "那你知道嗎", chat_type="group", chat_id=GROUP, reply_to=reply_to_bot
    )
    await world.edit(answered, "那你知道嗎？快說")
    assert len(world.fake.chat_requests) == 1 and len(world.sent()) == 1
