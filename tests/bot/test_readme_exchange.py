"""The README's example exchange is what the bot really prints (through the real Application).

The typed /remember is saved at once with ↩️ Undo; what the model proposes in a turn waits
for the user's 好.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.bot.conftest import OWNER, Harness
from tests.fakes.ollama_server import tool_reply

README = Path(__file__).resolve().parents[2] / "README.md"
SWIM = "我每週三晚上去游泳"


def readme_exchange() -> list[str]:
    """The lines of the README's exchange, without the indent."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("    you: /remember") :].split("\n    you: what do I drink")[0]
    return [line[4:] for line in block.splitlines()]


def as_in_readme(text: str) -> str:
    """The bot's text with its clock time and ids set to the README's."""
    text = re.sub(r"\d\d:\d\d 前有效", "14:35 前有效", text)
    text = re.sub(r"p-[0-9a-f]+", "p-1a2b3c4d", text)
    return re.sub(r"m-\d{8}-[0-9a-f]+", "m-20261125-1a2b3c4d", text)


def buttons(sent: dict[str, Any]) -> str:
    """A message's buttons as the README draws them."""
    return " ".join(f"[{b['text']}]" for b in sent["reply_markup"]["inline_keyboard"][0])


def model(body: dict[str, Any]) -> Any:
    """Proposes the swimming; once the tool answered, asks for the user's confirmation."""
    if body["messages"][-1]["role"] == "tool":
        return "好，要記住這件事嗎？確認後才會儲存。"
    return tool_reply("memory_save", text=SWIM)


async def test_the_readme_exchange_is_what_the_bot_prints(tg: Harness) -> None:
    assert tg.model is not None
    tg.model.chat_handler = model
    await tg.send(OWNER, "/remember 我每天早上喝烏龍茶", lang="zh-hant")
    saved = tg.last_markup()
    await tg.send(OWNER, f"對了，{SWIM}", lang="zh-hant")
    reply, shown = tg.api.named("sendMessage")[-2:]
    await tg.send(OWNER, "好", lang="zh-hant")
    confirmed = tg.api.texts()[-1]
    proposal = as_in_readme(shown["text"]).splitlines()
    expected = [
        "you: /remember 我每天早上喝烏龍茶",
        f"bot: {as_in_readme(saved['text'])}",
        f"     {buttons(saved)}",
        f"you: 對了，{SWIM}",
        f"bot: {reply['text']}",
        f"bot: {proposal[0]}",
        *[f"     {line}".rstrip() for line in proposal[1:]],
        f"     {buttons(shown)}",
        "you: 好",
        f"bot: {as_in_readme(confirmed)}",
    ]
    assert readme_exchange() == expected
