"""The typed context every handler receives (the per-user queues: bot/telegram/queues.py)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.ext import Application, CallbackContext, ExtBot

from agent.reminders.desk import ReminderDesk
from bot.frontdesk.desk import Desk
from bot.frontdesk.ports import Backend
from bot.frontdesk.shown import REVISE_WINDOW as REVISE_WINDOW  # where tests look for it
from bot.frontdesk.shown import Shown
from bot.frontdesk.steps import FrontDesk
from bot.settings import Settings


@dataclass(slots=True)
class BotDeps:
    """What the handlers need, built once by the application builder."""

    settings: Settings
    backend: Backend
    desk: Desk
    allowed: frozenset[int] = frozenset()
    # What each user's chat last showed and which ✏️ prompt is open (the terminal keeps the same).
    shown: Shown = field(default_factory=Shown)
    # Telegram ids already refused since the start (in memory only: nothing about a stranger
    # is stored): the refusal is said once, then they hear nothing.
    refused: OrderedDict[int, None] = field(default_factory=OrderedDict)

    @property
    def reminders(self) -> ReminderDesk | None:
        """Reminder commands and buttons, when the backend has a reminder service."""
        desk: ReminderDesk | None = getattr(self.backend, "reminders", None)
        return desk

    @property
    def front(self) -> FrontDesk:
        """The front desk's steps over this bot's services (bot/frontdesk/steps.py)."""
        return FrontDesk(self.backend, self.desk, self.reminders, self.shown)

    @property
    def last_shown(self) -> dict[str, str]:
        """User key -> what the bot's last message showed (:attr:`Shown.last`)."""
        return self.shown.last

    @property
    def awaiting_edit(self) -> dict[str, str]:
        """User key -> the proposal the next message edits (:attr:`Shown.editing`)."""
        return self.shown.editing

    @property
    def awaiting_revise(self) -> dict[str, tuple[str, float]]:
        """User key -> (memory id, time of ✏️) the next message revises (:attr:`Shown.revising`)."""
        return self.shown.revising

    def lang(self, update: Update, text: str = "") -> str:
        """The sender's one language (bot/frontdesk/language.py has the rule)."""
        user = update.effective_user
        code = user.language_code if user else None
        return self.backend.languages.of(user_key_of(update), code, text)

    def spoke(self, user_key: str) -> None:
        """The bot told the user something else: no proposal is its last message now."""
        self.shown.spoke(user_key)


DEPS = "deps"


class BotContext(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[str, Any]]):
    """CallbackContext with the bot's services at hand as the typed :attr:`deps`."""

    @property
    def deps(self) -> BotDeps:
        """The services of this bot."""
        deps: BotDeps = self.bot_data[DEPS]
        return deps


# bot_data key of the memory page's Mini App address (https), when the bot serves the page
MINI_APP = "mini_app"

BotApp = Application[ExtBot[None], BotContext, dict[Any, Any], dict[Any, Any], dict[str, Any], Any]


def user_key_of(update: Update) -> str:
    """``telegram_<user id>`` for the update's sender."""
    user = update.effective_user
    return f"telegram_{user.id}" if user else ""
