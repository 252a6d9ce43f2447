"""The README's example exchange is what the bot really prints (through the real Application)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.bot.conftest import OWNER, Harness

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_exchange() -> list[str]:
    """The bot's lines of the README's exchange, without the indent."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("    you: /remember") :].split("\n\n    bot: (the model")[0]
    return [line[4:] for line in block.splitlines()]


def as_in_readme(text: str) -> str:
    """The bot's text with its clock time and ids set to the README's."""
    text = re.sub(r"\d\d:\d\d 前有效", "14:35 前有效", text)
    text = re.sub(r"p-[0-9a-f]+", "p-1a2b3c4d", text)
    return re.sub(r"m-\d{8}-[0-9a-f]+", "m-20261125-1a2b3c4d", text)


async def test_the_readme_exchange_is_what_the_bot_prints(tg: Harness) -> None:
    await tg.send(OWNER, "/remember 我每天早上喝烏龍茶", lang="zh-hant")
    shown = tg.last_markup()
    labels = " ".join(f"[{b['text']}]" for b in shown["reply_markup"]["inline_keyboard"][0])
    [(message_id, _)] = tg.shown()
    await tg.press(
        OWNER, shown["reply_markup"]["inline_keyboard"][0][0]["callback_data"], message_id
    )
    confirmed = tg.api.named("editMessageText")[-1]["text"]
    proposal = as_in_readme(shown["text"]).splitlines()
    expected = [
        "you: /remember 我每天早上喝烏龍茶",
        f"bot: {proposal[0]}",
        *[f"     {line}".rstrip() for line in proposal[1:]],
        f"     {labels}",
        "you: (presses ✅ 確認, or replies 好 / yes to the proposal)",
        f"bot: {as_in_readme(confirmed)}",
    ]
    assert readme_exchange()[: len(expected)] == expected
