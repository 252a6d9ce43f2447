"""Fixtures for the Telegram handler tests: the real Application on an offline Bot API.

Everything behind the Bot API is PCAI's own: the real backend (``backend_for``) over the
composition root's services on a temp data dir, and the real agent talking to the fake
Ollama over HTTP. Only Telegram's HTTP (``RecordingRequest``) and the model are stand-ins.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from agent.ollama_client import OllamaChat
from agent.prompt import turn_message
from bot.app import Services, build_agent
from bot.frontdesk.backend import backend_for
from bot.telegram.application import build_application
from bot.telegram.context import BotApp
from bot.telegram.open_turns import OpenTurns
from tests.bot.offers import offer, offer_reminder
from tests.bot.telegram_doubles import RecordingRequest, Updates
from tests.fakes.ollama_server import FakeOllama

OWNER, FRIEND, STRANGER = 1001, 1002, 9999


@dataclass
class Harness:
    """The Application, its recorded Bot API, the services behind it and helpers to play users."""

    app: BotApp
    api: RecordingRequest
    updates: Updates
    services: Services
    model: FakeOllama | None = None

    async def send(self, user: int, text: str | None, **kw: Any) -> None:
        """Feed one message through the Application (an English client unless ``lang``)."""
        kw.setdefault("lang", "en")
        await self.app.process_update(self.updates.message(self.app.bot, user, text, **kw))

    async def press(self, user: int, data: str, message_id: int, lang: str = "en") -> None:
        """Feed one button press."""
        update = self.updates.button(self.app.bot, user, data, message_id, lang)
        await self.app.process_update(update)

    async def offer(self, user: int, text: str, lang: str = "en") -> str:
        """The model proposes ``text`` for ``user`` (:mod:`tests.bot.offers`); its id."""
        return await offer(self.app, self.services, user, text, lang)

    async def offer_reminder(self, user: int, phrase: str, lang: str = "en") -> int:
        """The model proposes a reminder for ``user`` (:mod:`tests.bot.offers`); its id."""
        return await offer_reminder(self.app, self.services, user, phrase, lang)

    def last_markup(self) -> dict[str, Any]:
        """The inline keyboard of the last message that had one."""
        marked = [p for p in self.api.named("sendMessage") if p.get("reply_markup")]
        return marked[-1]

    def shown(self) -> list[tuple[int, str]]:
        """(message id, proposal id) of every proposal message the bot sent, in order."""
        out = []
        for name, params, result in self.api.answered:
            markup = params.get("reply_markup") or {}
            rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
            if name == "sendMessage" and rows:
                out.append((int(result["message_id"]), str(rows[0][0]["callback_data"])[5:]))
        return out

    def asked(self) -> list[str]:
        """The user messages the model was asked to answer, one per turn, in order."""
        assert self.model is not None
        return [
            turn_message(str(body["messages"][-1]["content"]))
            for body in self.model.chat_requests
            if body["messages"][-1]["role"] == "user"
        ]


async def make_harness(
    services: Services, model: FakeOllama | None = None, **settings_changes: Any
) -> Harness:
    """An initialised Application for the owner and a friend over the real backend.

    With ``model`` the services get the real agent, talking to that fake Ollama; without it
    chat answers that it needs Ollama (the commands work either way).
    """
    settings = replace(
        services.settings,
        telegram_bot_token="123:TEST",
        allowed_users=(OWNER, FRIEND),
        **settings_changes,
    )
    if model is not None:
        build_agent(services, OllamaChat(model.url, settings.chat_model, timeout=10))
    api = RecordingRequest()
    app = build_application(
        settings, backend_for(services), request=api, turns=OpenTurns(services.state)
    )
    await app.initialize()
    return Harness(app, api, Updates(), services, model)


@pytest.fixture
async def tg(services: Services, fake_ollama: FakeOllama) -> AsyncIterator[Harness]:
    """An initialised bot for OWNER and FRIEND (groups off), its model the fake Ollama."""
    harness = await make_harness(services, fake_ollama)
    yield harness
    await harness.app.shutdown()


@pytest.fixture
def data_dir(
    clean_environment: Path, monkeypatch: pytest.MonkeyPatch, fake_ollama: FakeOllama
) -> Path:
    """The ``pcai`` commands' data folder (the clean environment's), the model the fake Ollama."""
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    return clean_environment
