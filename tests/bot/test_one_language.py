"""One language per person, everywhere (issue 23, item 5): every line the bot itself says is in
the reader's one language: command replies, refusals, notices, what a job sends, buttons.

An English reader and a Chinese reader each go through every command of the terminal chat (the
same desk as Telegram) and get what the jobs send. What a person wrote or stored is quoted back
as written (it may hold the other script: "my favourite tea is 烏龍茶"), so it is taken out of
each line first; so are the names every reader sees as they are (commands, ids, PCAI, Ollama,
Markdown, zone names). What is left are the bot's own words: for the English reader no Chinese
character, for the Chinese reader no English word.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from agent.ollama_client import OllamaChat
from agent.texts import say
from bot.app import Services, build_agent
from bot.chat import TerminalChat
from bot.fading import fading_job, text_offer
from bot.frontdesk.backend import backend_for
from bot.frontdesk.reminder_desk import reminder_desk_for
from bot.jobs import pending_expiry_job
from bot.recovery import lost_proposals_notice
from memory.base.users import UserPaths
from tests.bot.conftest import FRIEND, OWNER, Harness
from tests.fakes.ollama_server import FakeOllama
from tests.one_language import wrong_language

EN, ZH = "cli_emma", "cli_mei"
GONE = "m-20990101-000000"  # no such memory
# The same for both readers: forget and undo one's own memory, and every act on a missing one.
FORGET_AND_UNDO = (
    "/why",
    "/forget {id}",
    "/undo",
    "/undo",
    f"/forget {GONE}",
    f"/restore {GONE}",
    f"/keep {GONE}",
    f"/pin {GONE}",
    "/archived",
)
# The briefing's fixed forms and commands typed without what they need.
BRIEFING_AND_BARE = (
    "/briefing",
    "/briefing off",
    "/briefing now",
    "/confirm p-nope",
    "/edit",
    "/scope",
    "/search",
)
# Each reader's commands; "{id}" is their first live memory. Their own texts are in their
# language, two of them with a word of the other script.
SCRIPTS: dict[str, tuple[str, ...]] = {
    EN: (
        "hello there, can you remember things for me?",
        "/start",
        "/help",
        "/lang",
        "/memory",
        "/remember I drink green tea every morning",
        "yes",
        "/remember my favourite tea is 烏龍茶",
        "yes",
        "/memory",
        "/memory 9",
        "/memory abc",
        "/search green tea",
        "/search volcano",
        "/remember I drink green tea each morning",  # close to one kept: add or replace?
        "/pending",
        "/discard",
        "/confirm",
        "/pin {id}",
        "/unpin {id}",
        "/edit {id} I drink green tea every evening",
        "/scope {id} project:home",
        "/scope {id} nowhere",
        "/history tea",
        "/history xylophone quartz",
        *FORGET_AND_UNDO,
        "/remember my password is hunter2-secret",
        "/remember my sister Anna's birthday is March 3",
        "yes",
        "yes",
        "/new",
        "/stats",
        "/web",
        "/foo",
        "/remind tomorrow 9am call mom",
        "yes",
        "/reminders",
        "/remind sometime",
        "/tz Asia/Taipei",
        "/tz Nowhere/Land",
        "/tz",
        "/briefing 07:30",
        "/briefing whenever",
        *BRIEFING_AND_BARE,
    ),
    ZH: (
        "你好，你可以幫我記住事情嗎？",
        "/start",
        "/help",
        "/lang",
        "/memory",
        "/remember 我每天早上喝烏龍茶",
        "好",
        "/remember 我最喜歡的茶是 Earl Grey 伯爵茶",
        "好",
        "/memory",
        "/memory 9",
        "/memory abc",
        "/search 烏龍茶",
        "/search 火山",
        "/remember 我每天早上都喝烏龍茶",  # close to one kept: add or replace?
        "/pending",
        "/discard",
        "/confirm",
        "/pin {id}",
        "/unpin {id}",
        "/edit {id} 我每天晚上喝烏龍茶",
        "/scope {id} project:home",
        "/scope {id} 哪裡都不是",
        "/history 茶",
        "/history 火山石英",
        *FORGET_AND_UNDO,
        "/remember 我的密碼是 hunter2-secret",
        "/remember 我妹妹安娜的生日是3月3日",
        "好",
        "好",
        "/new",
        "/stats",
        "/web",
        "/foo",
        "/remind 明天早上九點 打電話給媽媽",
        "好",
        "/reminders",
        "/remind 有空的時候",
        "/tz Asia/Taipei",
        "/tz Nowhere/Land",
        "/tz",
        "/briefing 07:30",
        "/briefing 隨便",
        *BRIEFING_AND_BARE,
    ),
}


def typed_texts(script: Iterable[str]) -> set[str]:
    """What the person wrote after each command (and the plain lines), to be quoted back
    (a page number or a "yes" is too short to take out of a line: it would cut ids)."""
    out = set()
    for line in script:
        text = (line.partition(" ")[2] if line.startswith("/") else line).replace("{id} ", "")
        if len(text.strip()) > 3:
            out.add(text.strip())
    return out


async def play(services: Services, user_key: str) -> tuple[str, dict[str, str]]:
    """Everything the terminal chat printed for ``user_key``'s script, and each line's reply."""
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), user_key, out)
    replies = {}
    for line in SCRIPTS[user_key]:
        if "{id}" in line:
            live = [e for e in services.memory.entries(user_key) if e.status == "active"]
            line = line.replace("{id}", live[0].id)
        start = out.tell()
        await chat.handle(line)
        replies[line.split()[0] if line.startswith("/") else line] = out.getvalue()[start:]
    return out.getvalue(), replies


async def test_every_command_answers_in_the_readers_one_language(
    services: Services, fake_ollama: FakeOllama
) -> None:
    fake_ollama.chat_handler = lambda body: "👍"  # the model's words are not the bot's
    build_agent(services, OllamaChat(fake_ollama.url, services.settings.chat_model))
    bad, replies = [], {}
    for user_key, lang in ((EN, "en"), (ZH, "zh")):
        said, replies[user_key] = await play(services, user_key)
        # what they stored, as /memory lists it and as /why shows the file the model saw
        md = services.memory.paths(user_key).memory_md.read_text("utf-8")
        stored = {e.text for e in services.memory.entries(user_key)} | set(md.splitlines())
        quoted = typed_texts(SCRIPTS[user_key]) | {t for t in stored if len(t.strip()) > 3}
        bad += [f"{user_key} {line}" for line in wrong_language(lang, said, quoted)]
    assert bad == [], "\n".join(bad)
    # the two that were bilingual last: /new, and /history with nothing about the topic
    assert "No memory about 'xylophone quartz'." in replies[EN]["/history"]
    assert "沒有關於「火山石英」的記憶。" in replies[ZH]["/history"]
    # a proposal close to a kept memory asks "add or replace?" in the reader's words
    assert "Similar memory exists" in replies[EN]["/pending"]
    assert "已有相近的記憶" in replies[ZH]["/pending"]
    # the summary named in the reader's words; the file keeps its heading
    assert "conversation summary (" in replies[EN]["/new"]
    assert "對話摘要 (" in replies[ZH]["/new"]
    full = UserPaths.of(services.settings.data_dir, EN).memory_full_md
    assert "## 對話摘要 (" in full.read_text("utf-8")


async def test_the_terminal_greets_and_says_what_is_missing_in_the_readers_language(
    services: Services,
) -> None:
    services.memory.remember(ZH, "我每天早上喝烏龍茶")
    assert services.languages is not None
    services.languages.of(ZH, None, "我每天早上喝烏龍茶")  # Mei wrote Chinese before
    for user_key, lang in ((EN, "en"), (ZH, "zh")):
        backend = backend_for(services)
        backend.llm_up = False
        out = io.StringIO()
        chat = TerminalChat(backend, user_key, out)
        await chat.run_async(io.StringIO("/memory\n"))
        said = out.getvalue()
        assert "ollama serve" in said
        assert wrong_language(lang, said, {user_key, "我每天早上喝烏龍茶"}) == [], user_key


async def test_what_a_job_sends_is_in_the_persons_language(services: Services) -> None:
    """Expiry, fading and reminder alerts reach a person away from any message: their stored
    language, and English for a person nothing is known about."""
    assert services.languages is not None
    services.languages.choose(ZH, "zh")
    now = datetime.now(UTC)
    told: list[tuple[str, str]] = []

    async def notify(user_key: str, text: str) -> None:
        told.append((user_key, text))

    stored = {EN: ("I park on level 3", "I tried durian"), ZH: ("我把車停在三樓", "我吃過榴槤")}
    for user_key, (text, faded) in stored.items():
        services.confirm.propose(user_key, text, "command", now=now)
        old = services.memory.remember(user_key, faded, now=now)
        doc = services.memory.document(user_key)
        created = (now - timedelta(days=200)).isoformat(timespec="seconds")
        services.memory.write_document(user_key, doc.with_entry(replace(old, created_at=created)))
    later = now + timedelta(hours=2)
    await pending_expiry_job(notify)(services, later)
    await fading_job(services, later, notify, text_offer(notify))
    desk = reminder_desk_for(services)
    for user_key, text in ((EN, "call mom"), (ZH, "打電話給媽媽")):
        row, _ = desk.service.propose_phrase(user_key, f"in 5 minutes {text}")
        card = desk.alert_card(row, "⏰")
        labels = " ".join(b.label for line in card.buttons for b in line)
        told.append((user_key, labels))
    quoted = {text for pair in stored.values() for text in pair}
    for user_key, lang in ((EN, "en"), (ZH, "zh")):
        mine = [text for who, text in told if who == user_key]
        assert len(mine) == 3, mine  # the expiry, the fading notice, the alert's buttons
        for text in mine:
            assert wrong_language(lang, text, quoted) == [], text
    assert lost_proposals_notice(["我的車位"], "zh").count("「我的車位」") == 1


async def test_lang_sets_the_menus_of_that_persons_chat(tg: Harness) -> None:
    tg.app.bot_data["mini_app"] = "https://pcai.example.org/tg"  # the page is served on https
    await tg.send(OWNER, "/lang zh", lang="en")
    [call] = tg.api.named("setChatMenuButton")
    assert int(call["chat_id"]) == OWNER and "記憶頁" in str(call["menu_button"])
    [menu] = tg.api.named("setMyCommands")  # and the command menu of that chat
    assert str(OWNER) in str(menu["scope"]) and "說明" in str(menu["commands"])


async def test_a_flood_is_refused_in_the_language_the_person_chose(tg: Harness) -> None:
    from bot.telegram.queues import UserQueues
    from tests.bot.test_telegram_queues import _feed, _idle

    assert tg.services.languages is not None and tg.model is not None
    tg.services.languages.choose(f"telegram_{OWNER}", "zh")  # /lang zh, on an English phone
    tg.model.delay = 0.05
    processor: UserQueues = tg.app.update_processor  # type: ignore[assignment]
    updates = [tg.updates.message(tg.app.bot, OWNER, "/stats", lang="en") for _ in range(40)]
    await asyncio.gather(*(_feed(processor, u, tg.app.process_update(u)) for u in updates))
    await _idle(processor, 120)
    assert say("flood_skipped", "zh") in tg.api.texts()
    assert say("flood_skipped", "en") not in tg.api.texts()


def test_every_sentence_of_the_catalogues_is_in_its_own_language() -> None:
    """The chat's, the command menu's and the page's words: a new sentence that says both
    ("關鍵字 Keywords") fails here before anyone reads it."""
    from agent.texts import CATALOGUES
    from bot.frontdesk.texts import COMMANDS, STATS_LABELS
    from bot.web.i18n import WORDS

    pairs = [(key, CATALOGUES["zh"][key], CATALOGUES["en"][key]) for key in CATALOGUES["en"]]
    pairs += [(f"/{name}", zh, en) for name, zh, en in COMMANDS]
    pairs += [(f"/stats {key}", names["zh"], key) for key, names in STATS_LABELS.items()]
    # the page's switch names the other language in that language
    pairs += [(key, zh, en) for key, (zh, en) in WORDS.items() if key != "language"]
    assert len(pairs) > 250
    placeholder = re.compile(r"\{[^}]*\}")
    bad = [
        f"{key} ({lang}): {line}"
        for key, zh, en in pairs
        for lang, text in (("zh", zh), ("en", en))
        for line in wrong_language(lang, placeholder.sub(" ", text))
    ]
    assert bad == [], "\n".join(bad)


TG_SCRIPTS = {  # a Chinese phone that writes English, an English phone that writes Chinese
    (OWNER, "zh-hant", "en"): (
        "hello, I keep my bike in the garage downstairs",
        "/start",
        "/remember I drink green tea every morning",
        "/remember I drink green tea each morning",
        "/memory",
        "/remind tomorrow 9am call mom",
        "/reminders",
        "/stats",
        "/foo",
    ),
    (FRIEND, "en", "zh"): (
        "你好，我的腳踏車放在樓下車庫",
        "/start",
        "/remember 我每天早上喝烏龍茶",
        "/remember 我每天早上都喝烏龍茶",
        "/memory",
        "/remind 明天早上九點 打電話給媽媽",
        "/reminders",
        "/stats",
        "/foo",
    ),
}


def _told(tg: Harness, user: int, start: int) -> str:
    """Every text, button label and button answer the bot gave ``user`` since call ``start``
    (the others played before), one a line."""
    lines = []
    for name, params, _ in tg.api.answered[start:]:
        if name in ("sendMessage", "editMessageText") and int(params.get("chat_id", 0)) == user:
            lines.append(str(params.get("text", "")))
            markup = params.get("reply_markup") or {}
            for row in markup.get("inline_keyboard", []) if isinstance(markup, dict) else []:
                lines += [str(b["text"]) for b in row]
        if name == "answerCallbackQuery" and params.get("text"):
            lines.append(str(params["text"]))
    return "\n".join(lines)


def _buttons(tg: Harness, user: int, prefix: str) -> list[tuple[int, str]]:
    """(message id, callback data) of every button sent to ``user`` whose data starts so."""
    out = []
    for name, params, result in tg.api.answered:
        markup = params.get("reply_markup") or {}
        if name != "sendMessage" or int(params.get("chat_id", 0)) != user:
            continue
        for row in markup.get("inline_keyboard", []) if isinstance(markup, dict) else []:
            out += [(int(result["message_id"]), str(b["callback_data"])) for b in row]
    return [(mid, data) for mid, data in out if data.startswith(prefix)]


async def test_telegram_texts_buttons_and_answers_in_each_persons_language(tg: Harness) -> None:
    assert tg.model is not None
    tg.model.chat_handler = lambda body: "👍"  # the model's words are not the bot's
    sticker = {"photo": [{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}]}
    for (user, phone, lang), script in TG_SCRIPTS.items():
        start = len(tg.api.answered)
        for line in script:
            await tg.send(user, line, lang=phone)
        await tg.send(user, None, lang=phone, extra=sticker)  # "text only"
        # discard the proposal, pin, cancel the reminder, undo the typed /remember
        for prefix in ("pm:d:", "mm:p:", "rm:x:", "ud:memory:"):
            [(mid, data), *_] = _buttons(tg, user, prefix)
            await tg.press(user, data, mid, lang=phone)
        key = f"telegram_{user}"
        stored = {e.text for e in tg.services.memory.entries(key)} | {"call mom", "打電話給媽媽"}
        quoted = typed_texts(script) | stored
        said = _told(tg, user, start)
        assert len(said.splitlines()) > 30, said
        assert wrong_language(lang, said, quoted) == [], f"{key}: {said}"
