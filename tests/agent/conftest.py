"""An agent over real services (real SQLite, tmp data dir) talking to the fake Ollama."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.ollama_client import OllamaChat, OllamaEmbedder
from agent.pipeline import Agent
from agent.prompt import carried_memories
from agent.types import IncomingMessage
from bot.app import Services, build_agent, build_services
from bot.settings import load_settings
from memory.index.embedders import E5Embedder, Embedder
from tests.fakes.ollama_server import FakeOllama

USER = "cli_alice"


@dataclass
class Env:
    """The services, the agent and the fake server of one test."""

    services: Services
    agent: Agent
    fake: FakeOllama
    clock: datetime

    def msg(self, text: str, **kw: Any) -> IncomingMessage:
        """A message from USER, one minute after the previous one."""
        self.clock += timedelta(minutes=1)
        return IncomingMessage(user_key=kw.pop("user_key", USER), text=text, time=self.clock, **kw)

    def memory_block(self, request: int = -1) -> str:
        """The memories of one recorded /api/chat request as one block ("" when it had none)."""
        return carried_memories(self.fake.chat_requests[request]["messages"])

    @property
    def llm(self) -> OllamaChat:
        """The agent's Ollama chat client."""
        assert isinstance(self.agent.llm, OllamaChat)
        return self.agent.llm


def _env(tmp_path: Path, fake: FakeOllama, embedder: Embedder | None) -> Iterator[Env]:
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "OLLAMA_HOST": fake.url,
            "PCAI_EMBEDDER": "ollama" if embedder is None else "e5",
        }
    )
    if embedder is None:
        embedder = OllamaEmbedder(fake.url, settings.embed_model, dim=fake.dim)
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    agent = build_agent(services)
    start = datetime.now().astimezone().replace(microsecond=0)
    yield Env(services, agent, fake, start)
    services.close()


@pytest.fixture
def env(tmp_path: Path, fake_ollama: FakeOllama) -> Iterator[Env]:
    """Settings pointing at the fake (chat and embeddings), services, and the agent.

    The fake's bag-of-words embeddings make every query embedding an /api/embed request a
    test can see or fail; tests of what retrieval finds use :func:`e5_env`.
    """
    yield from _env(tmp_path, fake_ollama, None)


@pytest.fixture
def e5_env(tmp_path: Path, fake_ollama: FakeOllama, embedder: E5Embedder) -> Iterator[Env]:
    """The same, with the real embedded e5 model (floor 0.7, thresholds 0.3/0.35) for search.

    The fake Ollama still plays the chat model.
    """
    yield from _env(tmp_path, fake_ollama, embedder)
