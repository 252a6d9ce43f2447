"""Proposals the model makes, shown in a chat the way its turn shows them.

A ``/remember`` or ``/remind`` the user types is done at once now (their own act); what waits
for the user's answer is what the model proposes: ``memory_save`` (``TurnTools.save``, through
the confirmation service with source ``chat:<message id>``) and ``reminder_create`` (the
reminder service, source ``tool``). The tests of answering a proposal (buttons, replies, bare
words, expiry), on Telegram or in the terminal, start from one of these.
"""

from __future__ import annotations

import itertools
from datetime import datetime

from agent.turn.tools import proposal_view
from bot.app import Services
from bot.chat import TerminalChat
from bot.frontdesk.ports import Answer
from bot.telegram.confirm import show_proposals
from bot.telegram.context import DEPS, BotApp
from bot.telegram.reminders import show_reminders

_turns = itertools.count(1)


def shown_language(lang: str) -> str:
    """The language a Telegram client's code reads as ("zh-hant" -> "zh")."""
    return "zh" if lang.startswith("zh") else "en"


async def offer(app: BotApp, services: Services, user: int, text: str, lang: str = "en") -> str:
    """The model proposes ``text`` for ``user`` and its turn shows it; returns its id."""
    key = f"telegram_{user}"
    made = services.confirm.propose(
        key, text, f"chat:{next(_turns)}", now=datetime.now().astimezone()
    )
    views = (proposal_view(made),)
    await show_proposals(app.bot, app.bot_data[DEPS], user, key, views, shown_language(lang))
    return made.id


async def offer_reminder(
    app: BotApp, services: Services, user: int, phrase: str, lang: str = "en"
) -> int:
    """The model proposes the reminder ``phrase`` and its turn shows it; returns its id."""
    service, key = services.reminders, f"telegram_{user}"
    assert service is not None
    parsed = service.parse(key, phrase)
    row = service.propose(key, parsed.text, parsed.due, parsed.recurrence, "tool")
    views = (service.view(row),)
    await show_reminders(app.bot, app.bot_data[DEPS], user, key, views, shown_language(lang))
    return row.id


def offer_in_terminal(chat: TerminalChat, services: Services, text: str, lang: str = "en") -> str:
    """The model proposes ``text`` for the terminal's user, printed as its turn prints it."""
    made = services.confirm.propose(
        chat.user_key, text, f"chat:cli-{next(_turns)}", now=datetime.now().astimezone()
    )
    chat.show(Answer("", proposals=(proposal_view(made),)), lang)
    return made.id


def offer_reminder_in_terminal(
    chat: TerminalChat, services: Services, phrase: str, lang: str = "en"
) -> int:
    """The model proposes the reminder ``phrase`` in the terminal, printed as its turn does."""
    service = services.reminders
    assert service is not None
    parsed = service.parse(chat.user_key, phrase)
    row = service.propose(chat.user_key, parsed.text, parsed.due, parsed.recurrence, "tool")
    chat.show(Answer("", reminders=(service.view(row),)), lang)
    return row.id
