"""The terminal chat: the shared commands, and chat without Ollama."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from agent.ollama_client import OllamaChat
from agent.prompt import turn_message
from bot.app import Services, build_agent
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for, classify_words, ollama_reachable
from tests.bot.offers import offer_in_terminal, offer_reminder_in_terminal
from tests.fakes.ollama_server import FakeOllama


async def test_commands_and_confirm_by_word(services: Services) -> None:
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), "cli_ann", out)
    offer_in_terminal(chat, services, "我喜歡烏龍茶", "zh")  # the model's: it waits
    [waiting] = services.confirm.pending("cli_ann", datetime.now(UTC))
    assert f"/confirm {waiting.id}" in out.getvalue()
    await chat.handle("確認")
    assert [e.text for e in services.memory.entries("cli_ann")] == ["我喜歡烏龍茶"]
    await chat.handle("/memory")
    await chat.handle("/search 烏龍")
    assert out.getvalue().count("我喜歡烏龍茶") >= 3
    # A result shows the memory's id, to act on (/forget, /pin; issue 24).
    [entry] = services.memory.entries("cli_ann")
    assert f"(MEMORY.md · {entry.id})" in out.getvalue().splitlines()[-1]
    await chat.handle("/help")
    assert "/quit" in out.getvalue() and "/pending" in out.getvalue()
    assert await chat.handle("/quit") is False


async def test_chat_goes_to_the_agent(services: Services, fake_ollama: FakeOllama) -> None:
    build_agent(services, OllamaChat(fake_ollama.url, services.settings.chat_model))
    fake_ollama.chat_handler = lambda body: (
        f"you said {turn_message(body['messages'][-1]['content'])}"
    )
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), "cli_ann", out)
    await chat.handle("hello there")
    assert "you said hello there" in out.getvalue()
    session = services.sessions.load("cli_ann")
    assert [m.content for m in session.messages] == ["hello there", "you said hello there"]


async def test_without_ollama_memory_commands_still_work(services: Services) -> None:
    services.memory.remember("cli_bob", "bob likes jazz")
    backend = backend_for(services, check_llm=False)
    backend.llm_up = False
    out = io.StringIO()
    chat = TerminalChat(backend, "cli_bob", out)
    await chat.run_async(io.StringIO("hi\n/memory\n/search jazz\n/export\n"))
    text = out.getvalue()
    assert "ollama serve" in text and f"ollama pull {services.settings.chat_model}" in text
    assert text.count("bob likes jazz") >= 3


def test_ollama_unreachable_is_detected() -> None:
    assert ollama_reachable("http://127.0.0.1:9", timeout=0.5) is False


def test_confirm_and_reject_words() -> None:
    assert classify_words("確認") == "confirm" and classify_words("好！") == "confirm"
    assert classify_words("Yes") == "confirm" and classify_words("取消") == "reject"
    assert classify_words("no") == "reject" and classify_words("好像不對") is None


async def test_an_unknown_command_says_so(services: Services) -> None:
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), "cli_ann", out)
    await chat.handle("/settings")
    assert out.getvalue() == "I don't know the command /settings. /help lists the commands.\n"


async def test_the_terminal_never_speaks_of_buttons(services: Services) -> None:
    from bot.frontdesk.reminder_desk import reminder_desk_for

    out = io.StringIO()
    desk = reminder_desk_for(services)
    chat = TerminalChat(backend_for(services), "cli_ann", out, reminders=desk)
    offer_in_terminal(chat, services, "I like green tea")
    offer_in_terminal(chat, services, "I walk the dog at seven")
    await chat.handle("yes")  # two waiting: which one?
    await chat.handle("/confirm")
    offer_reminder_in_terminal(chat, services, "tomorrow 9am call mom")
    await chat.handle("/remember I ride to work")  # saved at once: /undo, no button
    await chat.handle("/remind tomorrow 10am call dad")
    await chat.handle("/help")
    said = out.getvalue()
    assert "Type /confirm <id> or /discard <id>." in said
    assert "⏰ Set this reminder?" in said
    for word in ("press", "Press", "button", "按"):
        assert word not in said, word
