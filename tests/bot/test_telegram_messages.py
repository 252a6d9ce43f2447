"""Conversation, access control, groups, non-text, errors, splitting and ordering."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent.prompt import turn_message
from bot.app import Services
from bot.frontdesk.texts import split_text
from bot.telegram.sending import send_text
from tests.bot.conftest import FRIEND, OWNER, STRANGER, Harness, make_harness
from tests.bot.telegram_doubles import BOT
from tests.fakes.ollama_server import FakeOllama, tool_reply


def echo(body: dict[str, Any]) -> str:
    """A model that answers with the user's message."""
    return f"echo: {turn_message(body['messages'][-1]['content'])}"


async def test_text_goes_to_the_agent_with_typing(tg: Harness, services: Services) -> None:
    assert tg.model is not None
    tg.model.chat_handler, tg.model.delay = echo, 0.05
    await tg.send(OWNER, "hello 你好")
    assert tg.api.texts()[-1] == "echo: hello 你好"
    assert tg.asked() == ["hello 你好"]
    [body] = tg.model.chat_requests
    # A private turn: the personal prompt (not the group one) in the message's language, tools.
    assert "personal assistant" in body["messages"][0]["content"]
    assert "reply in Chinese" in body["messages"][-1]["content"] and body["tools"]
    session = services.sessions.load("telegram_1001")
    assert [m.content for m in session.messages] == ["hello 你好", "echo: hello 你好"]
    assert session.messages[0].time.tzinfo is not None
    assert tg.api.named("sendChatAction")[0]["action"] == "typing"


async def test_stranger_refused_once_and_nothing_stored(
    services: Services, fake_ollama: FakeOllama
) -> None:
    tg = await make_harness(services, fake_ollama)
    before = sorted(p for p in Path(services.settings.data_dir).rglob("*"))
    await tg.send(STRANGER, "hi, remember my phone 0912345678")
    await tg.send(STRANGER, "/memory")
    await tg.press(STRANGER, "pm:c:p1", 5)
    await tg.app.shutdown()
    assert tg.model is not None and tg.model.chat_requests == []
    assert [t for t in tg.api.texts() if "only serves" in t] == [
        "Sorry, this bot only serves its owner."
    ]  # once (the README promises one), not on every message
    [pressed] = tg.api.named("answerCallbackQuery")
    assert "text" not in pressed  # the button's spinner stops; nothing is said again
    after = sorted(p for p in Path(services.settings.data_dir).rglob("*"))
    assert after == before and not any("9999" in str(p) for p in after)


async def test_empty_allowed_list_serves_nobody(
    services: Services, fake_ollama: FakeOllama
) -> None:
    tg = await make_harness(services, fake_ollama)
    tg.app.bot_data["deps"].allowed = frozenset()
    await tg.send(OWNER, "hello")
    await tg.app.shutdown()
    assert fake_ollama.chat_requests == [] and "only serves" in tg.api.texts()[-1]


async def test_groups_off_by_default(tg: Harness) -> None:
    await tg.send(OWNER, "@TestNameBot hello", chat_type="group", chat_id=-5)
    assert tg.asked() == [] and tg.api.texts() == []


async def test_groups_on_only_when_addressed_and_no_memories(
    services: Services, fake_ollama: FakeOllama
) -> None:
    tg = await make_harness(services, fake_ollama, groups=True)
    services.memory.remember("telegram_1001", "Owner's private fact: the safe code is 4471")

    def proposing(body: dict[str, Any]) -> Any:
        if body["messages"][-1]["role"] == "tool":
            return "sure"
        return tool_reply("memory_save", text="The group meets on Fridays")

    fake_ollama.chat_handler = proposing
    await tg.send(OWNER, "just chatting", chat_type="group", chat_id=-5)
    assert tg.asked() == []
    await tg.send(OWNER, "@TestNameBot hello", chat_type="group", chat_id=-5)
    await tg.send(
        OWNER,
        "again",
        chat_type="group",
        chat_id=-5,
        reply_to={"message_id": 7, "date": 0, "chat": {"id": -5, "type": "group"}, "from": BOT},
    )
    await tg.send(OWNER, "/memory", chat_type="group", chat_id=-5)
    await tg.app.shutdown()
    assert [t.removeprefix("@TestNameBot ") for t in tg.asked()] == ["hello", "again"]
    for body in fake_ollama.chat_requests:  # the group prompt, no tools, no memory
        assert "group chat" in body["messages"][0]["content"] and not body.get("tools")
        assert "safe code" not in json.dumps(body, ensure_ascii=False)
    assert not any(p.get("reply_markup") for p in tg.api.named("sendMessage"))  # no proposal
    assert services.confirm.pending("telegram_1001", datetime.now(UTC)) == []
    assert "private chat" in tg.api.texts()[-1]
    assert "safe code" not in " ".join(tg.api.texts())


async def test_non_text_gets_text_only(tg: Harness) -> None:
    sticker = {
        "sticker": {
            "file_id": "s",
            "file_unique_id": "s",
            "type": "regular",
            "width": 1,
            "height": 1,
            "is_animated": False,
            "is_video": False,
        }
    }
    await tg.send(OWNER, None, extra=sticker)
    photo = {"photo": [{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}]}
    await tg.send(OWNER, None, extra=photo)
    assert tg.api.texts() == ["Text only for now."] * 2
    assert tg.asked() == []


async def test_a_caption_is_a_message(tg: Harness) -> None:
    assert tg.model is not None
    tg.model.chat_handler = echo
    photo = {"photo": [{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}]}
    await tg.send(OWNER, None, extra={**photo, "caption": "my new bike, remember its colour"})
    document = {"document": {"file_id": "d", "file_unique_id": "d", "file_name": "a.pdf"}}
    await tg.send(OWNER, None, extra={**document, "caption": "the lease I signed today"})
    assert tg.asked() == ["my new bike, remember its colour", "the lease I signed today"]
    assert "Text only for now." not in tg.api.texts()


async def test_errors_give_one_sentence_never_a_trace(
    tg: Harness, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("database exploded at /secret/path")

    # A fault deep inside the turn: the session store cannot save.
    monkeypatch.setattr(services.sessions, "save", boom)
    await tg.send(OWNER, "hello")
    assert tg.api.texts() == ["Sorry, something went wrong on my side."]
    monkeypatch.undo()
    await tg.send(FRIEND, "hello")  # the bot goes on
    assert tg.api.texts()[-1] == "ok"


async def test_long_reply_split_on_paragraphs(tg: Harness) -> None:
    paragraphs = [f"{i:03d} " + "x" * 95 for i in range(100)]  # 100 paragraphs, 10,198 chars
    assert tg.model is not None
    tg.model.chat_handler = lambda body: "\n\n".join(paragraphs)
    await tg.send(OWNER, "tell me a lot")
    pieces = tg.api.texts()
    assert len(pieces) == 3 and all(len(p) <= 4096 for p in pieces)
    assert "\n\n".join(pieces).split("\n\n") == paragraphs  # cut only between paragraphs


def test_split_text_edges() -> None:
    assert split_text("") == []
    assert split_text("short") == ["short"]
    solid = "字" * 9000  # no break at all: hard cuts, nothing lost
    assert "".join(split_text(solid)) == solid and len(split_text(solid)) == 3


async def test_html_rejected_falls_back_to_plain(tg: Harness) -> None:
    tg.api.reject_html = True
    await send_text(tg.app.bot, OWNER, "<b>bold</b> & done", html=True)
    assert tg.api.texts()[-1] == "bold & done"
