"""Proposals: buttons, replies with 確認/取消, ✏️ Edit, expiry."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.types import Reply
from bot.app import Services
from tests.bot.conftest import FRIEND, OWNER, Harness
from tests.bot.telegram_doubles import bot_message


def _shown(tg: Harness) -> tuple[int, str]:
    """(message id, proposal id) of the last proposal the bot showed."""
    markup = tg.last_markup()
    data = markup["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    mid = next(k for (u, k), p in tg.backend.shown.items() if p == data.split(":")[2])
    return int(mid), data.split(":")[2]


async def test_model_proposal_confirmed_with_the_button(tg: Harness, services: Services) -> None:
    def agent(msg: object) -> Reply:
        view = tg.backend.propose("telegram_1001", "我喜歡藍色", tg_now())
        return Reply("好的，要記住嗎？", proposals=(view,))

    tg.backend.agent = agent
    await tg.send(OWNER, "記住我喜歡藍色", lang="zh-hant")
    mid, pid = _shown(tg)
    await tg.press(OWNER, f"pm:c:{pid}", mid, lang="zh-hant")
    assert [e.text for e in services.memory.entries("telegram_1001")] == ["我喜歡藍色"]
    edit = tg.api.named("editMessageText")[-1]
    assert edit["message_id"] == mid and "已記住" in edit["text"]
    assert "reply_markup" not in edit  # the buttons are gone
    assert tg.api.named("answerCallbackQuery")


async def test_reply_with_confirm_word(tg: Harness, services: Services) -> None:
    await tg.send(OWNER, "/remember 我住在台北", lang="zh-hant")
    mid, _ = _shown(tg)
    await tg.send(OWNER, "確認", reply_to=bot_message(mid, OWNER), lang="zh-hant")
    assert [e.text for e in services.memory.entries("telegram_1001")] == ["我住在台北"]
    assert tg.api.named("editMessageText")[-1]["message_id"] == mid
    assert tg.backend.seen == []  # the confirm word never went to the agent


async def test_reply_with_reject_word_and_bare_word(tg: Harness, services: Services) -> None:
    await tg.send(OWNER, "/remember first")
    mid, _ = _shown(tg)
    await tg.send(OWNER, "取消", reply_to=bot_message(mid, OWNER))
    assert "已捨棄" in tg.api.texts()[-1]  # a Chinese word gets a Chinese answer
    await tg.send(OWNER, "/remember second")
    await tg.send(OWNER, "yes")  # only one waiting: a bare confirm word answers it
    assert [e.text for e in services.memory.entries("telegram_1001")] == ["second"]


async def test_edit_asks_for_new_text(tg: Harness, services: Services) -> None:
    await tg.send(OWNER, "/remember I like tee")
    mid, pid = _shown(tg)
    await tg.press(OWNER, f"pm:e:{pid}", mid)
    prompt = tg.api.named("sendMessage")[-1]
    assert "new text" in prompt["text"] and prompt["reply_markup"]["force_reply"]
    await tg.send(OWNER, "I like tea")
    mid2, pid2 = _shown(tg)
    assert "I like tea" in tg.last_markup()["text"]
    await tg.press(OWNER, f"pm:c:{pid2}", mid2)
    assert [e.text for e in services.memory.entries("telegram_1001")] == ["I like tea"]


async def test_any_other_reply_to_a_waiting_proposal_is_its_new_text(
    tg: Harness, services: Services
) -> None:
    await tg.send(OWNER, "/remember I like tee")
    mid, pid = _shown(tg)
    await tg.send(OWNER, "I like green tea", reply_to=bot_message(mid, OWNER))
    assert tg.backend.seen == []  # an edit, not a chat turn
    assert "I like green tea" in tg.last_markup()["text"]
    assert [v.text for v in tg.backend.pending("telegram_1001")] == ["I like green tea"]
    mid, _ = _shown(tg)
    await tg.press(OWNER, f"pm:d:{pid}", mid)
    await tg.send(OWNER, "why did you ask?", reply_to=bot_message(mid, OWNER))
    assert [m.text for m in tg.backend.seen] == ["why did you ask?"]  # answered: chat again


async def test_expired_proposal_says_so(tg: Harness, services: Services) -> None:
    tg.backend.ttl = timedelta(seconds=-1)
    await tg.send(OWNER, "/remember too late")
    mid, pid = _shown(tg)
    await tg.press(OWNER, f"pm:c:{pid}", mid)
    assert "expired" in tg.api.named("editMessageText")[-1]["text"]
    assert services.memory.entries("telegram_1001") == []


async def test_another_user_cannot_confirm_my_proposal(tg: Harness, services: Services) -> None:
    await tg.send(OWNER, "/remember mine")
    mid, pid = _shown(tg)
    await tg.press(FRIEND, f"pm:c:{pid}", mid)
    assert services.memory.entries("telegram_1002") == []
    assert services.memory.entries("telegram_1001") == []
    assert tg.backend.pending("telegram_1001")


def tg_now() -> datetime:
    """Now, aware."""
    return datetime.now().astimezone()


async def test_real_write_path_through_telegram(services: Services) -> None:
    """/remember -> button -> MEMORY.md, /forget, /history with the real ConfirmationService."""
    from bot.telegram.application import build_application
    from bot.telegram.backend import backend_for
    from tests.bot.conftest import make_harness

    tg = await make_harness(services)
    await tg.app.shutdown()
    app = build_application(
        tg.app.bot_data["deps"].settings, backend_for(services), request=tg.api
    )
    await app.initialize()
    tg.app = app
    await tg.send(OWNER, "/remember 我最喜歡的顏色是藍色", lang="zh-hant")
    markup = tg.last_markup()
    data = markup["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    mid = tg.api.next_id
    await tg.press(OWNER, data, mid, lang="zh-hant")
    entries = services.memory.entries("telegram_1001")
    assert [e.text for e in entries] == ["我最喜歡的顏色是藍色"]
    assert "已記住" in tg.api.named("editMessageText")[-1]["text"]
    await tg.send(OWNER, "/remember 我的密碼是 hunter2-Secret!", lang="zh-hant")
    assert "hunter2" not in json_dump(services)  # refused, never stored
    await tg.send(OWNER, "/history 顏色")
    await tg.send(OWNER, f"/forget {entries[0].id}")
    assert services.memory.entries("telegram_1001") == []
    assert "藍色" not in json_dump(services)  # forgotten, not archived
    await tg.send(OWNER, "/undo")
    assert [e.text for e in services.memory.entries("telegram_1001")] == ["我最喜歡的顏色是藍色"]
    await app.shutdown()


def json_dump(services: Services) -> str:
    """Every file under the data folder, as one string."""
    root = services.settings.data_dir
    return "".join(
        p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.suffix == ".md"
    )
