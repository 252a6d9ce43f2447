"""One language per person: chosen, else the Telegram client's, else what they write."""

from __future__ import annotations

import re

from bot.app import Services
from bot.frontdesk.language import Languages
from bot.frontdesk.language_book import LanguageBook
from tests.bot.conftest import FRIEND, OWNER, Harness


def test_the_rule_choice_then_writing_then_client_then_english(services: Services) -> None:
    langs = Languages(LanguageBook(services.state))
    assert langs.of("cli_ann") == "en"  # nothing known: English
    assert langs.of("cli_ann", None, "我喜歡烏龍茶") == "zh"
    for short in ("/help", "m-20261125-ab12cd", "ok", "yes please"):  # too short to tell
        assert langs.of("cli_ann", None, short) == "zh", short
    assert langs.of("telegram_2", "zh-hant") == "zh"  # nothing written yet: the client's
    assert langs.of("telegram_2", "zh-hant", "what do I drink in the morning") == "en"
    assert langs.of("telegram_2", "zh-hant", "/help") == "en"  # what they wrote is kept
    assert langs.of("telegram_1", "en", "我每天早上喝烏龍茶") == "zh"
    assert langs.of("telegram_3", "en", "媽媽的生日是5月3日") == "zh"  # digits inside Chinese
    langs.choose("telegram_1", "en")
    assert langs.of("telegram_1", "en", "我每天早上喝烏龍茶") == "en"  # a choice wins
    # kept in pcai.db: a new process knows it
    again = Languages(LanguageBook(services.state))
    assert again.of("telegram_1", "zh", "我喜歡") == "en" and again.of("cli_ann") == "zh"


async def test_start_without_a_language_code_is_english(tg: Harness) -> None:
    await tg.send(OWNER, "/start", lang=None)
    [welcome] = tg.api.texts()
    assert welcome.startswith("Hi! I'm PCAI")
    assert "你好" not in welcome


async def test_help_speaks_one_language(tg: Harness) -> None:
    await tg.send(OWNER, "/help", lang="en")
    await tg.send(FRIEND, "/help", lang="zh-hant")
    help_en, help_zh = tg.api.texts()
    assert "/remember — remember something (saved at once; /undo)" in help_en
    assert "記住" not in help_en and "指令" not in help_en
    assert "/remember — 記住一件事（立刻儲存，可 /undo）" in help_zh
    assert "remember something" not in help_zh


async def test_lang_switches_everything_from_then_on(tg: Harness, services: Services) -> None:
    await tg.send(OWNER, "/lang zh", lang="en")
    await tg.send(OWNER, "/remember I like green tea", lang="en")
    labels = [b["text"] for b in tg.last_markup()["reply_markup"]["inline_keyboard"][0]]
    await tg.send(OWNER, "/forget m-20990101-000000", lang="en")
    await tg.send(OWNER, "/undo", lang="en")  # takes the /remember back
    await tg.send(OWNER, "/undo", lang="en")  # nothing left to take back
    switched, saved, forget, undone, nothing = tg.api.texts()
    assert switched.startswith("好的，之後我都用中文")
    assert saved.startswith("✅ 已記住：I like green tea") and labels == [
        "↩️ 復原記住「I like green tea」"
    ]
    for said in (forget, undone, nothing):  # in the one language, not English + Chinese
        bare = re.sub(r"m-\d{8}-[0-9a-f]+|/undo|/forget|/remember|/remind|/edit|/pin", "", said)
        assert not any("a" <= ch.lower() <= "z" for ch in bare), said
    await tg.send(OWNER, "/lang en", lang="zh-hant")
    assert tg.api.texts()[-1] == "From now on I speak English with you (/lang zh for Chinese)."


async def test_a_secret_is_refused_in_the_persons_language(tg: Harness) -> None:
    await tg.send(OWNER, "/remember my card is 4111 1111 1111 1111", lang="en")
    said = tg.api.texts()[-1]
    assert "4111" not in said
    assert not any("\u3400" <= ch <= "\u9fff" for ch in said), said


def test_a_section_reads_in_the_readers_language() -> None:
    from bot.frontdesk.texts import section_label

    assert section_label("個人 Personal", "en") == "Personal"
    assert section_label("個人 Personal", "zh") == "個人"
    assert section_label("General", "zh") == "一般"
    assert section_label("General", "en") == "General"
    assert section_label("Travel plans", "zh") == "Travel plans"  # the user's own name


async def test_a_proposal_names_its_section_once(tg: Harness) -> None:
    await tg.offer(OWNER, "my sister Anna's birthday is March 3", lang="en")
    shown = tg.last_markup()["text"]
    assert "[Personal]" in shown and "個人" not in shown
