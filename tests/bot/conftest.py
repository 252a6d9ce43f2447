"""Fixtures for the Telegram handler tests: the real Application on an offline Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from bot.app import Services
from bot.telegram.application import build_application
from bot.telegram.context import BotApp
from tests.bot.telegram_doubles import RecordingRequest, StandInBackend, Updates

OWNER, FRIEND, STRANGER = 1001, 1002, 9999


@dataclass
class Harness:
    """The Application, its recorded Bot API and helpers to play users."""

    app: BotApp
    api: RecordingRequest
    backend: StandInBackend
    updates: Updates

    async def send(self, user: int, text: str | None, **kw: Any) -> None:
        """Feed one message through the Application (an English client unless ``lang``)."""
        kw.setdefault("lang", "en")
        await self.app.process_update(self.updates.message(self.app.bot, user, text, **kw))

    async def press(self, user: int, data: str, message_id: int, lang: str = "en") -> None:
        """Feed one button press."""
        update = self.updates.button(self.app.bot, user, data, message_id, lang)
        await self.app.process_update(update)

    def last_markup(self) -> dict[str, Any]:
        """The inline keyboard of the last message that had one."""
        marked = [p for p in self.api.named("sendMessage") if p.get("reply_markup")]
        return marked[-1]


async def make_harness(services: Services, **settings_changes: Any) -> Harness:
    """Build and initialise an Application for the owner and a friend."""
    settings = replace(
        services.settings,
        telegram_bot_token="123:TEST",
        allowed_users=(OWNER, FRIEND),
        **settings_changes,
    )
    api = RecordingRequest()
    backend = StandInBackend(services)
    app = build_application(settings, backend, request=api)
    await app.initialize()
    return Harness(app, api, backend, Updates())


@pytest.fixture
async def tg(services: Services) -> AsyncIterator[Harness]:
    """An initialised bot for OWNER and FRIEND (groups off)."""
    harness = await make_harness(services)
    yield harness
    await harness.app.shutdown()
