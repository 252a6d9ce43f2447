"""The typed context every handler receives, and the per-user update processor."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor, CallbackContext, ExtBot

from bot.frontdesk.desk import Desk
from bot.frontdesk.ports import Backend
from bot.frontdesk.reminder_desk import ReminderDesk
from bot.settings import Settings


@dataclass(slots=True)
class BotDeps:
    """What the handlers need, built once by the application builder."""

    settings: Settings
    backend: Backend
    desk: Desk
    # user key -> proposal id whose new text the user's next message is (after ✏️ Edit);
    # honoured only while that proposal still waits.
    awaiting_edit: dict[str, str] = field(default_factory=dict)
    allowed: frozenset[int] = frozenset()
    # user key -> the proposal the bot's last message in the private chat showed, if it did:
    # a bare "ok" may answer only that one.
    last_shown: dict[str, str] = field(default_factory=dict)
    # user key -> (memory id, monotonic time of the ✏️ press under /memory): the user's next
    # message is that memory's new text, if it comes within REVISE_WINDOW seconds.
    awaiting_revise: dict[str, tuple[str, float]] = field(default_factory=dict)
    # Telegram ids already refused since the start (in memory only: nothing about a stranger
    # is stored): the refusal is said once, then they hear nothing.
    refused: OrderedDict[int, None] = field(default_factory=OrderedDict)

    @property
    def reminders(self) -> ReminderDesk | None:
        """Reminder commands and buttons, when the backend has a reminder service."""
        desk: ReminderDesk | None = getattr(self.backend, "reminders", None)
        return desk

    def lang(self, update: Update, text: str = "") -> str:
        """The sender's one language (bot/frontdesk/language.py has the rule)."""
        user = update.effective_user
        code = user.language_code if user else None
        return self.backend.languages.of(user_key_of(update), code, text)

    def spoke(self, user_key: str) -> None:
        """The bot told the user something else: no proposal is its last message now."""
        self.last_shown.pop(user_key, None)


DEPS = "deps"
REVISE_WINDOW = 600.0  # an edit prompt answered ten minutes later is ordinary chat again


class BotContext(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[str, Any]]):
    """CallbackContext with the bot's services at hand as the typed :attr:`deps`."""

    @property
    def deps(self) -> BotDeps:
        """The services of this bot."""
        deps: BotDeps = self.bot_data[DEPS]
        return deps


BotApp = Application[ExtBot[None], BotContext, dict[Any, Any], dict[Any, Any], dict[str, Any], Any]


def user_key_of(update: Update) -> str:
    """``telegram_<user id>`` for the update's sender."""
    user = update.effective_user
    return f"telegram_{user.id}" if user else ""


class PerUserProcessor(BaseUpdateProcessor):
    """Different users are served concurrently; one user's updates run one at a time, in order.

    The lock is taken in the order updates arrive (asyncio locks queue their waiters FIFO),
    so a user's second message is handled only after the first one's reply went out.
    """

    def __init__(self, max_concurrent_updates: int = 256) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: dict[int, tuple[asyncio.Lock, int]] = {}

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run ``coroutine`` under the sender's lock."""
        key = _sender_id(update)
        if key is None:
            await coroutine
            return
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                await coroutine
        finally:
            # Strangers must not grow this map forever: drop a lock nobody holds or awaits.
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""


def _sender_id(update: object) -> int | None:
    if isinstance(update, Update):
        if update.effective_user:
            return update.effective_user.id
        if update.effective_chat:
            return update.effective_chat.id
    return None
