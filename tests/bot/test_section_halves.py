"""A section named in both languages ("個人 Personal") reads in the reader's half wherever a
person reads section names in the chat: /memory, and /why's memory overview; and either half
names the section when one is typed."""

from __future__ import annotations

import io
from pathlib import Path

from agent.ollama_client import OllamaChat
from bot.app import Services, build_agent
from bot.chat import TerminalChat
from bot.cli import main
from bot.frontdesk.backend import backend_for
from memory.base.users import UserPaths
from tests.fakes.ollama_server import FakeOllama

EN, ZH = "cli_emma", "cli_mei"
SECTIONS = ("個人 Personal", "偏好 Preferences", "General")


async def _said(services: Services, user_key: str, lines: list[str]) -> dict[str, str]:
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), user_key, out)
    replies = {}
    for line in lines:
        start = out.tell()
        await chat.handle(line)
        replies[line.split()[0]] = out.getvalue()[start:]
    return replies


async def test_why_and_memory_name_each_section_by_the_readers_half(
    services: Services, fake_ollama: FakeOllama
) -> None:
    fake_ollama.chat_handler = lambda body: "👍"
    build_agent(services, OllamaChat(fake_ollama.url, services.settings.chat_model))
    for user_key, texts in (
        (EN, ("I live in Oslo with my wife", "I prefer window seats", "Buy oat milk")),
        (ZH, ("我住在台北", "我喜歡靠窗的座位", "買燕麥奶")),
    ):
        for text, section in zip(texts, SECTIONS, strict=True):
            services.memory.remember(user_key, text, section=section)
    # Small talk finds nothing: the reply is given the overview of every memory by section.
    en = await _said(services, EN, ["Hello, how are you today?", "/why", "/memory"])
    zh = await _said(services, ZH, ["謝謝你，再見", "/why", "/memory"])
    # Was: the overview's Markdown as it is in the file, "## 個人 Personal" to both.
    assert "Personal:\n- I live in Oslo with my wife" in en["/why"], en["/why"]
    assert "Preferences:\n- I prefer window seats" in en["/why"]
    assert "個人:\n- 我住在台北" in zh["/why"] and "一般:\n- 買燕麥奶" in zh["/why"], zh["/why"]
    for reply in (en["/why"], en["/memory"]):
        assert "個人" not in reply and "偏好" not in reply and "##" not in reply, reply
    for reply in (zh["/why"], zh["/memory"]):
        assert "Personal" not in reply and "General" not in reply and "##" not in reply, reply
    assert "[Personal] I live in Oslo with my wife" in en["/memory"]
    assert "[個人] 我住在台北" in zh["/memory"]


def test_a_section_named_by_one_half_is_the_section_of_both_names(data_dir: Path) -> None:
    # Was: `pcai remember --section Personal` (or 偏好, as `pcai remember --help` shows) made
    # a second section beside "個人 Personal", and the English reader saw "Personal" twice.
    assert main(["remember", "--user", "ann", "I live in Oslo with my wife"]) == 0
    assert main(["remember", "--user", "ann", "--section", "personal", "My son plays chess"]) == 0
    assert main(["remember", "--user", "ann", "--section", "偏好", "Aisle seats on trains"]) == 0
    assert main(["remember", "--user", "ann", "--section", "Travel", "Oslo in June"]) == 0
    md = UserPaths.of(data_dir, "cli_ann").memory_md.read_text("utf-8")
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings == ["## 個人 Personal", "## 偏好 Preferences", "## Travel"], md
