"""One way to the model for both front ends: the backend the settings name (issue 28, item 6).

``pcai chat`` and Telegram both reach the model through :mod:`bot.model_backends`; with
``PCAI_LLM_BACKEND=openai`` the terminal talks to the OpenAI-compatible server (here the fake
of tests/fakes, speaking real HTTP) and never asks Ollama.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agent.prompt import turn_message
from bot.app import Services, build_agent
from bot.chat import TerminalChat
from bot.cli import main
from bot.frontdesk.backend import backend_for
from bot.model_backends import BACKENDS, model_backend
from tests.bot.conftest import OWNER, make_harness
from tests.fakes.openai_server import FakeOpenAI

NOWHERE = "http://127.0.0.1:9"  # nothing answers here (Ollama is not running)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """The fake OpenAI-compatible server on 127.0.0.1."""
    server = FakeOpenAI(model="qwen2.5-7b-instruct")
    yield server
    server.stop()


def _asked(fake: FakeOpenAI) -> list[str]:
    """The user messages the server was asked to answer."""
    return [
        turn_message(str(body["messages"][-1]["content"]))
        for body in fake.requests
        if body["messages"][-1]["role"] == "user"
    ]


async def _said_to_hello(services: Services, url: str) -> str:
    """What the terminal chat prints for "hello" with the OpenAI-compatible server at ``url``."""
    services.settings = replace(
        services.settings, llm_backend="openai", llm_base_url=url, ollama_host=NOWHERE
    )
    build_agent(services)
    out = io.StringIO()
    chat = TerminalChat(backend_for(services, check_llm=True), "cli_ann", out)
    await chat.run_async(io.StringIO("hello\n"))
    return out.getvalue()


def test_pcai_chat_talks_to_the_openai_compatible_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_openai: FakeOpenAI,
) -> None:
    monkeypatch.setenv("PCAI_DATA_DIR", str(tmp_path / "botmemory"))
    monkeypatch.setenv("OLLAMA_HOST", NOWHERE)
    monkeypatch.setenv("PCAI_LLM_BACKEND", "openai")
    monkeypatch.setenv("PCAI_LLM_BASE_URL", fake_openai.url)
    monkeypatch.setenv("PCAI_CHAT_MODEL", "qwen2.5-7b-instruct")
    monkeypatch.setenv("PCAI_WEB_ENABLED", "false")
    fake_openai.queue_chat("Hello from the llama server.")
    monkeypatch.setattr("sys.stdin", io.StringIO("how are you today?\n/quit\n"))
    assert main(["chat", "--user", "ann"]) == 0
    out = capsys.readouterr().out
    assert "Hello from the llama server." in out
    assert "Chat needs" not in out and "ollama serve" not in out
    assert _asked(fake_openai) == ["how are you today?"]


async def test_a_down_server_is_named_once_with_its_address(
    services: Services, fake_openai: FakeOpenAI
) -> None:
    url = fake_openai.url
    fake_openai.stop()  # configured, but not running
    said = await _said_to_hello(services, url)
    assert said.count("Chat needs") == 1, said  # at start; the message says only "still"
    assert f"OpenAI-compatible server at {url}" in said and "Ollama" not in said
    assert f"the model server at {url} still does not answer" in said


async def test_telegram_and_the_terminal_take_the_backend_from_one_registry(
    services: Services, fake_openai: FakeOpenAI
) -> None:
    services.settings = replace(
        services.settings,
        llm_backend="openai",
        llm_base_url=fake_openai.url,
        chat_model="qwen2.5-7b-instruct",
        ollama_host=NOWHERE,
    )
    assert model_backend(services.settings) is BACKENDS["openai"]
    build_agent(services)  # what `pcai run` builds for either front end
    fake_openai.queue_chat("answer on Telegram", "answer in the terminal")

    tg = await make_harness(services)
    try:
        await tg.send(OWNER, "hello from Telegram")
    finally:
        await tg.app.shutdown()
    assert tg.api.texts()[-1] == "answer on Telegram"

    backend = backend_for(services, check_llm=True)
    assert backend.server.backend is BACKENDS["openai"] and backend.chat_available()
    out = io.StringIO()
    await TerminalChat(backend, "cli_ann", out).run_async(io.StringIO("hello from the terminal\n"))
    assert "answer in the terminal" in out.getvalue() and "Chat needs" not in out.getvalue()
    assert _asked(fake_openai) == ["hello from Telegram", "hello from the terminal"]


async def test_a_password_in_the_server_address_is_never_printed(
    services: Services, fake_openai: FakeOpenAI
) -> None:
    host = fake_openai.url.removeprefix("http://")
    fake_openai.stop()  # down: the sentence names the address
    url = f"http://bob:hunter22secret@{host}"
    said = await _said_to_hello(services, url)
    assert f"http://***@{host}" in said, said
    assert "hunter22secret" not in said and "bob:" not in said
