"""An expired proposal's notice reaches its owner's Telegram chat, once, from the real job.

The bot is built as ``pcai run`` builds it (``ptb_job_setup`` on the Application's JobQueue)
over services whose proposals expire at once (``PCAI_PENDING_TTL_MINUTES=0``); the scheduled
``pending_expiry`` job is run now instead of waiting for its minute tick.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from bot.app import Services, build_services
from bot.frontdesk.backend import backend_for
from bot.scheduling import ptb_job_setup
from bot.settings import Settings
from bot.telegram.application import build_application
from bot.telegram.context import BotApp
from memory.config import PendingConfig
from memory.index.embedders import E5Embedder
from tests.bot.conftest import FRIEND, OWNER
from tests.bot.offers import offer
from tests.bot.telegram_doubles import RecordingRequest, Updates

TRAIN = "My train to Hualien leaves at 7:40 from platform 2"


@dataclass
class Bot:
    """The Application with every scheduled job, its recorded Bot API and its services."""

    app: BotApp
    api: RecordingRequest
    updates: Updates
    services: Services

    async def send(self, user: int, text: str) -> None:
        await self.app.process_update(self.updates.message(self.app.bot, user, text, lang="en"))

    async def tick(self, name: str) -> None:
        """Run the scheduled job ``name`` now, as its trigger would."""
        assert self.app.job_queue is not None
        [job] = self.app.job_queue.get_jobs_by_name(name)
        await job.run(self.app)

    def sent_to(self, chat_id: int) -> list[str]:
        return [str(p["text"]) for p in self.api.named("sendMessage") if p["chat_id"] == chat_id]


@pytest.fixture
async def bot(settings: Settings, embedder: E5Embedder) -> AsyncIterator[Bot]:
    settings = replace(
        settings,
        telegram_bot_token="123:TEST",
        allowed_users=(OWNER, FRIEND),
        pending=PendingConfig(ttl_minutes=0),
    )
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    api = RecordingRequest()
    app = build_application(
        settings, backend_for(services), request=api, jobs=ptb_job_setup(services)
    )
    await app.initialize()
    assert app.job_queue is not None
    await app.job_queue.start()
    yield Bot(app, api, Updates(), services)
    await app.job_queue.stop(wait=False)
    await app.shutdown()
    services.close()


def _markup_of_last_proposal(api: RecordingRequest) -> tuple[int, str]:
    for name, params, result in reversed(api.answered):
        markup: Any = params.get("reply_markup") or {}
        if name == "sendMessage" and isinstance(markup, dict) and markup.get("inline_keyboard"):
            return int(result["message_id"]), str(markup["inline_keyboard"][0][0]["callback_data"])
    raise AssertionError("no proposal was shown")


async def test_the_expiry_notice_reaches_the_owners_chat_once(bot: Bot) -> None:
    await offer(bot.app, bot.services, OWNER, TRAIN)  # the model's: it waits for an answer
    mid, confirm = _markup_of_last_proposal(bot.api)
    before = len(bot.sent_to(OWNER))

    await bot.tick("pending_expiry")
    [notice] = bot.sent_to(OWNER)[before:]
    assert "⌛" in notice and TRAIN in notice and "not saved" in notice
    assert "沒有寫入" not in notice  # the owner wrote English: one language, theirs
    assert bot.sent_to(FRIEND) == []

    await bot.tick("pending_expiry")  # the next minute: told once, not every tick
    assert len(bot.sent_to(OWNER)) == before + 1

    # The proposal's own button now says it expired; nothing was written.
    await bot.app.process_update(bot.updates.button(bot.app.bot, OWNER, confirm, mid))
    assert "expired" in bot.api.named("editMessageText")[-1]["text"]
    await bot.send(OWNER, "yes")  # the notice was the bot's last word: "yes" confirms nothing
    assert bot.services.memory.entries(f"telegram_{OWNER}") == []
