"""Conversation, access control, groups, non-text, errors, splitting and ordering."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent.types import IncomingMessage, Reply
from bot.app import Services
from bot.telegram.context import PerUserProcessor
from bot.telegram.sending import send_text
from bot.telegram.texts import detect_language, split_text
from tests.bot.conftest import OWNER, STRANGER, Harness, make_harness
from tests.bot.telegram_doubles import BOT


async def test_text_goes_to_the_agent_with_typing(tg: Harness) -> None:
    tg.backend.delay = 0.05
    await tg.send(OWNER, "hello 你好")
    assert tg.api.texts()[-1] == "echo: hello 你好"
    msg = tg.backend.seen[0]
    assert msg.user_key == "telegram_1001" and msg.time.tzinfo is not None
    assert msg.language == "zh" and not msg.in_group
    assert tg.api.named("sendChatAction")[0]["action"] == "typing"


async def test_stranger_refused_once_and_nothing_stored(services: Services) -> None:
    tg = await make_harness(services)
    before = sorted(p for p in Path(services.settings.data_dir).rglob("*"))
    await tg.send(STRANGER, "hi, remember my phone 0912345678")
    await tg.send(STRANGER, "/memory")
    await tg.press(STRANGER, "pm:c:p1", 5)
    await tg.app.shutdown()
    assert tg.backend.seen == []
    assert [t for t in tg.api.texts() if "only serves" in t] == [
        "Sorry, this bot only serves its owner."
    ] * 2
    assert tg.api.named("answerCallbackQuery")
    after = sorted(p for p in Path(services.settings.data_dir).rglob("*"))
    assert after == before and not any("9999" in str(p) for p in after)


async def test_empty_allowed_list_serves_nobody(services: Services) -> None:
    tg = await make_harness(services)
    tg.app.bot_data["deps"].allowed = frozenset()
    await tg.send(OWNER, "hello")
    await tg.app.shutdown()
    assert tg.backend.seen == [] and "only serves" in tg.api.texts()[-1]


async def test_groups_off_by_default(tg: Harness) -> None:
    await tg.send(OWNER, "@TestNameBot hello", chat_type="group", chat_id=-5)
    assert tg.backend.seen == [] and tg.api.texts() == []


async def test_groups_on_only_when_addressed_and_no_memories(services: Services) -> None:
    tg = await make_harness(services, groups=True)
    services.memory.remember("telegram_1001", "private fact")
    tg.backend.agent = lambda m: Reply(
        "sure", proposals=(tg.backend.propose(m.user_key, "x", m.time),)
    )
    await tg.send(OWNER, "just chatting", chat_type="group", chat_id=-5)
    assert tg.backend.seen == []
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
    assert [m.text for m in tg.backend.seen] == ["hello", "again"]
    assert all(m.in_group for m in tg.backend.seen)
    assert not any(p.get("reply_markup") for p in tg.api.named("sendMessage"))  # no proposal
    assert "private chat" in tg.api.texts()[-1]
    assert "private fact" not in " ".join(tg.api.texts())


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
    assert tg.backend.seen == []


async def test_errors_give_one_sentence_never_a_trace(tg: Harness) -> None:
    def boom(msg: IncomingMessage) -> Reply:
        raise RuntimeError("database exploded at /secret/path")

    tg.backend.agent = boom
    await tg.send(OWNER, "hello")
    assert tg.api.texts() == ["Sorry, something went wrong on my side."]


async def test_long_reply_split_on_paragraphs(tg: Harness) -> None:
    paragraphs = [f"{i:03d} " + "x" * 95 for i in range(100)]  # 100 paragraphs, 10,198 chars
    tg.backend.agent = lambda m: Reply("\n\n".join(paragraphs))
    await tg.send(OWNER, "tell me a lot")
    pieces = tg.api.texts()
    assert len(pieces) == 3 and all(len(p) <= 4096 for p in pieces)
    assert "\n\n".join(pieces).split("\n\n") == paragraphs  # cut only between paragraphs


def test_split_text_edges() -> None:
    assert split_text("") == []
    assert split_text("short") == ["short"]
    solid = "字" * 9000  # no break at all: hard cuts, nothing lost
    assert "".join(split_text(solid)) == solid and len(split_text(solid)) == 3


def test_detect_language() -> None:
    assert detect_language("zh-hant") == "zh"
    assert detect_language("en", "hello") == "en"
    assert detect_language(None, "我喜歡 coffee") == "zh"
    assert detect_language(None, "hello") == "en"


async def test_html_rejected_falls_back_to_plain(tg: Harness) -> None:
    tg.api.reject_html = True
    await send_text(tg.app.bot, OWNER, "<b>bold</b> & done", html=True)
    assert tg.api.texts()[-1] == "bold & done"


async def test_one_user_in_order_users_concurrent() -> None:
    processor = PerUserProcessor()
    events: list[str] = []

    async def work(name: str, delay: float) -> None:
        events.append(f"start {name}")
        await asyncio.sleep(delay)
        events.append(f"end {name}")

    def update(user: int) -> object:
        from telegram import Update

        return Update.de_json(
            {
                "update_id": user,
                "message": {
                    "message_id": 1,
                    "date": 0,
                    "chat": {"id": user, "type": "private"},
                    "from": {"id": user, "is_bot": False, "first_name": "u"},
                    "text": "x",
                },
            },
            None,
        )

    await asyncio.gather(
        processor.process_update(update(1), work("a1", 0.05)),
        processor.process_update(update(1), work("a2", 0.0)),
        processor.process_update(update(2), work("b1", 0.0)),
    )
    assert events.index("end a1") < events.index("start a2")  # same user: in order
    assert events.index("end b1") < events.index("end a1")  # other user: not kept waiting
    assert processor._locks == {}  # idle locks are dropped
