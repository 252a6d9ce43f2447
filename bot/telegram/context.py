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


# bot_data key of the memory page's Mini App address (https), when the bot serves the page
MINI_APP = "mini_app"

BotApp = Application[ExtBot[None], BotContext, dict[Any, Any], dict[Any, Any], dict[str, Any], Any]


def user_key_of(update: Update) -> str:
    """``telegram_<user id>`` for the update's sender."""
    user = update.effective_user
    return f"telegram_{user.id}" if user else ""
