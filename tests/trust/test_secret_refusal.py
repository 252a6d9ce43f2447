"""Promise 5, attacked through the real turn: a message holding a secret is never proposed.

"remember: my bank password is: hunter22" goes through the agent over real services and the
fake Ollama, three ways: the model proposes the sentence, the model proposes the secret
without its keyword ("bank: hunter22"), or the model calls nothing and the bot proposes from
the user's own words. Each time nothing is pending, the reply says why, and no byte of the
secret is in any file under the data dir: the session JSON, the daily log, MEMORY.md, both
SQLite databases and their WAL files, read raw while the databases are still open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agent.ollama_client import OllamaEmbedder
from agent.types import IncomingMessage
from bot.app import build_agent, build_services
from bot.settings import load_settings
from tests.fakes.ollama_server import FakeOllama, tool_reply

OWNER = "telegram_2002"
SECRET = "hunter22"
Model = Callable[[dict[str, Any]], Any]


def _proposes(text: str) -> Model:
    """A model that answers the message with ``memory_save(text)``, then says it is saved."""

    def handler(request: dict[str, Any]) -> Any:
        last = request["messages"][-1]
        if last["role"] == "user":
            return tool_reply("memory_save", text=text, section="Bank")
        return "Saved it."

    return handler


def _calls_nothing(request: dict[str, Any]) -> Any:
    return "OK, I'll remember that."


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """Where the bot keeps everything."""
    return tmp_path / "botmemory"


@pytest.fixture
def run(data_dir: Path, fake_ollama: FakeOllama) -> Iterator[Callable[[Model, str], Any]]:
    """Send one message through the real agent with the given model; files stay open."""
    settings = load_settings(
        {"PCAI_DATA_DIR": str(data_dir), "OLLAMA_HOST": fake_ollama.url, "PCAI_EMBEDDER": "ollama"}
    )
    embedder = OllamaEmbedder(fake_ollama.url, settings.embed_model, dim=fake_ollama.dim)
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    services.memory.remember(OWNER, "I like green tea", section="Food")  # MEMORY.md exists
    agent = build_agent(services)

    async def send(model: Model, text: str) -> Any:
        fake_ollama.chat_handler = model
        msg = IncomingMessage(
            user_key=OWNER, text=text, time=datetime.now().astimezone(), language="en"
        )
        reply = await agent.respond(msg)
        return reply, services.confirm.pending(OWNER)

    yield send
    services.close()


@pytest.mark.parametrize(
    "model",
    [
        _proposes("My bank password is: hunter22"),
        _proposes("bank: hunter22"),  # the model dropped the keyword
        _proposes("Bank login hunter22 (remember)"),
        _calls_nothing,  # the bot proposes from the user's own words
    ],
    ids=["model-says-it", "model-drops-keyword", "model-rewords", "from-user-words"],
)
async def test_a_message_with_a_secret_is_refused_and_stored_nowhere(
    run: Callable[[Model, str], Any], data_dir: Path, model: Model
) -> None:
    reply, pending = await run(model, "remember: my bank password is: hunter22")
    assert pending == []
    assert "password" in reply.text.lower()  # the refusal names what was refused
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"MEMORY.md", "pcai.db", "pcai.db-wal"} <= names, names
    assert [n for n in names if n.endswith(".sqlite-wal")], names  # the index's WAL
    assert any(n.endswith(".json") for n in names)  # the session
    assert any(p.parent.name == "memory" and p.suffix == ".md" for p in files)  # the day's log
    assert [str(p.relative_to(data_dir)) for p in files if SECRET.encode() in p.read_bytes()] == []


@pytest.mark.parametrize(
    "said",
    [
        "remember that the wifi key: hunter22",
        "please remember my PIN is 4 4 5 1",
        "記住：我的銀行密碼是：hunter22",
        "remember: mein Passwort lautet hunter22",
        "remember my card 4111.1111.1111.1111",
    ],
)
async def test_no_phrasing_of_a_secret_becomes_a_proposal(
    run: Callable[[Model, str], Any], said: str
) -> None:
    _, pending = await run(_calls_nothing, said)
    assert pending == []
