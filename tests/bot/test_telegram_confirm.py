"""Proposals through Telegram: buttons, replies with 確認/取消, ✏️ Edit, expiry, ownership.

The real backend and write path run behind the real Application; only Telegram's HTTP and the
model (fake Ollama) are stand-ins.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest

from bot.app import Services, build_services
from bot.settings import Settings
from memory.config import PendingConfig
from memory.index.embedders import E5Embedder
from tests.bot.conftest import FRIEND, OWNER, Harness, make_harness
from tests.bot.telegram_doubles import bot_message
from tests.fakes.ollama_server import FakeOllama, tool_reply

KEY = f"telegram_{OWNER}"


def _entries(services: Services, key: str = KEY) -> list[str]:
    return [e.text for e in services.memory.entries(key)]


def _waiting(services: Services, key: str = KEY) -> list[str]:
    return [p.text for p in services.confirm.pending(key, tg_now())]


def tg_now() -> datetime:
    """Now, aware."""
    return datetime.now().astimezone()


async def test_model_proposal_confirmed_with_the_button(tg: Harness, services: Services) -> None:
    def model(body: dict[str, Any]) -> Any:
        if body["messages"][-1]["role"] == "tool":
            return "好的，要記住嗎？"
        return tool_reply("memory_save", text="我喜歡藍色")

    assert tg.model is not None
    tg.model.chat_handler = model
    await tg.send(OWNER, "記住我喜歡藍色", lang="zh-hant")
    assert _entries(services) == [] and _waiting(services) == ["我喜歡藍色"]
    [(mid, pid)] = tg.shown()
    await tg.press(OWNER, f"pm:c:{pid}", mid, lang="zh-hant")
    assert _entries(services) == ["我喜歡藍色"]
    edit = tg.api.named("editMessageText")[-1]
    assert edit["message_id"] == mid and "已記住" in edit["text"]
    assert "reply_markup" not in edit  # the buttons are gone
    assert tg.api.named("answerCallbackQuery")


async def test_reply_with_confirm_word(tg: Harness, services: Services) -> None:
    await tg.offer(OWNER, "我住在台北", lang="zh-hant")
    [(mid, _)] = tg.shown()
    await tg.send(OWNER, "確認", reply_to=bot_message(mid, OWNER), lang="zh-hant")
    assert _entries(services) == ["我住在台北"]
    assert tg.api.named("editMessageText")[-1]["message_id"] == mid
    assert tg.asked() == []  # the confirm word never went to the model


async def test_reply_with_reject_word_and_bare_word(tg: Harness, services: Services) -> None:
    await tg.offer(OWNER, "My first bike was a red Peugeot")
    [(mid, _)] = tg.shown()
    await tg.send(OWNER, "取消", reply_to=bot_message(mid, OWNER))
    assert "已捨棄" in tg.api.texts()[-1]  # a Chinese word gets a Chinese answer
    assert _waiting(services) == []
    await tg.offer(OWNER, "My second bike is a blue Brompton")
    await tg.send(OWNER, "yes")  # only one waiting, just shown: a bare confirm word answers it
    assert _entries(services) == ["My second bike is a blue Brompton"]
    assert tg.asked() == []


async def test_edit_asks_for_new_text(tg: Harness, services: Services) -> None:
    await tg.offer(OWNER, "I like green tee")
    [(mid, pid)] = tg.shown()
    await tg.press(OWNER, f"pm:e:{pid}", mid)
    prompt = tg.api.named("sendMessage")[-1]
    assert "new text" in prompt["text"] and prompt["reply_markup"]["force_reply"]
    await tg.send(OWNER, "I like green tea")
    mid2, pid2 = tg.shown()[-1]
    assert "I like green tea" in tg.last_markup()["text"]
    await tg.press(OWNER, f"pm:c:{pid2}", mid2)
    assert _entries(services) == ["I like green tea"]
    assert tg.asked() == []  # the new text was an edit, not a chat turn


async def test_any_other_reply_to_a_waiting_proposal_is_its_new_text(
    tg: Harness, services: Services
) -> None:
    await tg.offer(OWNER, "I like green tee")
    [(mid, pid)] = tg.shown()
    await tg.send(OWNER, "I like jasmine green tea", reply_to=bot_message(mid, OWNER))
    assert tg.asked() == []  # an edit, not a chat turn
    assert "I like jasmine green tea" in tg.last_markup()["text"]
    assert _waiting(services) == ["I like jasmine green tea"]
    mid, _ = tg.shown()[-1]
    await tg.press(OWNER, f"pm:d:{pid}", mid)
    assert _waiting(services) == [] and _entries(services) == []
    await tg.send(OWNER, "why did you ask?", reply_to=bot_message(mid, OWNER))
    assert tg.asked() == ["why did you ask?"]  # answered: chat again


@pytest.fixture
async def instant_expiry(
    settings: Settings, embedder: E5Embedder, fake_ollama: FakeOllama
) -> AsyncIterator[Harness]:
    """The bot over services whose proposals expire as soon as they are made (TTL 0)."""
    services = build_services(replace(settings, pending=PendingConfig(ttl_minutes=0)), embedder)
    services.memory.ensure_index()
    tg = await make_harness(services, fake_ollama)
    yield tg
    await tg.app.shutdown()
    services.close()


async def test_expired_proposal_says_so(instant_expiry: Harness) -> None:
    tg, services = instant_expiry, instant_expiry.services
    await tg.offer(OWNER, "My train to Hualien leaves at 7:40")
    [(mid, pid)] = tg.shown()
    await tg.press(OWNER, f"pm:c:{pid}", mid)
    assert "expired" in tg.api.named("editMessageText")[-1]["text"]
    assert _entries(services) == []
    await tg.send(OWNER, "yes")  # nothing live to answer: a bare word confirms nothing
    assert _entries(services) == []


async def test_another_user_cannot_confirm_my_proposal(tg: Harness, services: Services) -> None:
    await tg.offer(OWNER, "My locker is number 118")
    [(mid, pid)] = tg.shown()
    await tg.press(FRIEND, f"pm:c:{pid}", mid)
    await tg.send(FRIEND, f"/confirm {pid}")
    await tg.send(FRIEND, "yes", reply_to=bot_message(mid, FRIEND))
    assert _entries(services, "telegram_1002") == []
    assert _entries(services) == []
    assert _waiting(services) == ["My locker is number 118"]  # still the owner's to answer
    await tg.press(OWNER, f"pm:c:{pid}", mid)
    assert _entries(services) == ["My locker is number 118"]


async def test_confirm_and_discard_by_id(tg: Harness, services: Services) -> None:
    await tg.offer(OWNER, "My dentist is Dr. Lin on Zhongshan Road")
    await tg.offer(OWNER, "My gym closes at 22:00 on Sundays")
    await tg.offer(OWNER, "My passport expires in March 2031")
    _, (_, gym), (_, passport) = tg.shown()
    await tg.send(OWNER, f"/discard {gym}")
    assert "Discarded" in tg.api.texts()[-1] and "gym" in tg.api.texts()[-1]
    await tg.send(OWNER, f"/confirm {passport}")
    assert "Remembered" in tg.api.texts()[-1]
    assert _entries(services) == ["My passport expires in March 2031"]
    assert _waiting(services) == ["My dentist is Dr. Lin on Zhongshan Road"]
    await tg.send(OWNER, f"/confirm {gym}")  # already discarded: nothing to confirm
    assert _entries(services) == ["My passport expires in March 2031"]
    await tg.send(OWNER, "/discard p-does-not-exist")
    assert _waiting(services) == ["My dentist is Dr. Lin on Zhongshan Road"]
    assert tg.asked() == []  # commands, never chat turns


async def test_the_write_path_through_telegram(tg: Harness, services: Services) -> None:
    """/remember -> MEMORY.md at once; a secret refused; /history, /forget, /undo."""
    await tg.send(OWNER, "/remember 我最喜歡的顏色是藍色", lang="zh-hant")
    [entry] = services.memory.entries(KEY)
    assert entry.text == "我最喜歡的顏色是藍色"
    assert "已記住" in tg.api.texts()[-1]
    await tg.send(OWNER, "/remember 我的密碼是 hunter2-Secret!", lang="zh-hant")
    assert "hunter2" not in markdown_dump(services)  # refused, never stored
    assert _entries(services) == ["我最喜歡的顏色是藍色"] and _waiting(services) == []
    await tg.send(OWNER, f"/history {entry.id}")
    assert entry.id in tg.api.texts()[-1] and "我最喜歡的顏色是藍色" in tg.api.texts()[-1]
    await tg.send(OWNER, f"/forget {entry.id}")
    assert services.memory.entries(KEY) == []
    assert "藍色" not in markdown_dump(services)  # forgotten, not archived
    await tg.send(OWNER, "/undo")
    assert _entries(services) == ["我最喜歡的顏色是藍色"]


def markdown_dump(services: Services) -> str:
    """Every Markdown file under the data folder, as one string."""
    root = services.settings.data_dir
    return "".join(
        p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.suffix == ".md"
    )


async def test_a_proposal_button_pressed_in_a_group_does_nothing(
    tg: Harness, services: Services
) -> None:
    """A ``pm:`` press arriving from a group (a forwarded or crafted button) must neither
    confirm the private proposal nor post its text there (it did, before the check)."""
    from telegram import Update

    await tg.send(OWNER, "/lang zh", lang="zh-hant")
    await tg.offer(OWNER, "我住在台北", lang="zh-hant")
    [(mid, pid)] = tg.shown()
    deps = tg.app.bot_data["deps"]
    deps.settings = replace(deps.settings, groups=True)  # past the gate: the handler decides
    sent_before = len(tg.api.named("sendMessage"))
    for code in ("c", "e", "x"):
        data = tg.updates.button(tg.app.bot, OWNER, f"pm:{code}:{pid}", mid, "en").to_dict()
        data["callback_query"]["message"]["chat"] = {"id": -100123, "type": "group", "title": "G"}
        await tg.app.process_update(Update.de_json(data, tg.app.bot))
    assert _entries(services) == [] and _waiting(services) == ["我住在台北"]
    assert len(tg.api.named("sendMessage")) == sent_before
    assert tg.api.named("editMessageText") == []
    answers = tg.api.named("answerCallbackQuery")
    # the owner chose Chinese: the refusal is in their one language
    assert len(answers) == 3 and all("請私訊我" in a["text"] for a in answers)
