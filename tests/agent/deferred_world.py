"""One "process" over a temporary data dir for the deferred-work tests: services, agent, worker.

Real services, the fake Ollama for the model and the embedder. A "restart" is
:func:`open_world` again over the same data dir, as a new process would.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from agent.build import agent_worker
from agent.deferred import DeferredWorker
from agent.ollama_client import OllamaEmbedder
from agent.types import IncomingMessage
from bot.app import Services, build_agent, build_services
from bot.settings import load_settings
from tests.fakes.chat_requests import instruction_of, summarised_lines
from tests.fakes.ollama_server import FakeOllama

USER = "telegram_4242"
WORD = "藍莓鬆餅"  # the message's distinctive words: searchable once indexed


@dataclass
class World:
    """Services, agent and worker of one "process" over a data dir."""

    services: Services
    worker: DeferredWorker
    fake: FakeOllama
    clock: datetime

    def msg(self, text: str, n: int) -> IncomingMessage:
        return IncomingMessage(USER, text, self.clock + timedelta(minutes=n), message_id=f"m{n}")

    @property
    def agent(self) -> Any:
        return self.services.agent

    def log_rel(self, n: int) -> str:
        return self.services.daily_log.rel_path(self.clock + timedelta(minutes=n))

    def indexed(self, n: int) -> bool:
        """Whether message ``n``'s log record is in the index."""
        return f"m{n}" in self.services.store.indexed_units(USER, self.log_rel(n))

    def full_md(self) -> str:
        path = self.services.memory.paths(USER).memory_full_md
        return path.read_text("utf-8") if path.exists() else ""


def open_world(data: Path, fake: FakeOllama, clock: datetime, **env: str) -> World:
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(data),
            "OLLAMA_HOST": fake.url,
            "PCAI_EMBEDDER": "ollama",
            **env,
        }
    )
    embedder = OllamaEmbedder(fake.url, settings.embed_model, dim=fake.dim)
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    agent = build_agent(services)
    return World(services, agent_worker(agent), fake, clock)


# Compaction after 3 user turns, keeping 1 (as tests/trust/test_secrets.py does).
SMALL = {"PCAI_HISTORY_AUTO_WRITE_THRESHOLD_TURNS": "3", "PCAI_HISTORY_HISTORY_TURNS_AFTER": "1"}


def summarising_model(request: dict[str, Any]) -> str:
    """Answers "好的"; a summary request gets the lines it was asked about, as points."""
    if instruction_of(request).startswith("Summarise"):
        lines = summarised_lines(request)
        return "\n".join(f"- {ln[:80]}" for ln in lines)
    return "好的"
