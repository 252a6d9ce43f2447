"""Button presses: every callback query is answered exactly once, whatever its data says.

Telegram keeps a spinner on a pressed button until the bot answers its callback query, and
takes one answer only. A client can send any data (up to 64 bytes) under any message, so every
path a press can take ends in :func:`answer_once`: the handler that knows the button, the catch
-all :func:`on_unknown_button` for data the bot never made, the gate (strangers, presses with no
chat), the flood bound of the user's queue, and the error handler when a handler failed first.
The ids answered are remembered (a bounded map in ``bot_data``), so a second answer is never
sent.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import MutableMapping
from typing import Any

from telegram import CallbackQuery, Update
from telegram.error import TelegramError

from bot.frontdesk.texts import say
from bot.telegram.context import BotContext

log = logging.getLogger(__name__)
ANSWERED = "answered_queries"  # bot_data key: callback query ids answered, oldest first
ANSWERED_MAX = 10_000  # a query expires within minutes: the oldest ids can be forgotten
ALERT_MAX = 190  # Telegram's limit for an answer's text is 200 characters


def _answered(bot_data: MutableMapping[Any, Any]) -> OrderedDict[str, None]:
    seen: OrderedDict[str, None] = bot_data.setdefault(ANSWERED, OrderedDict())
    return seen


def was_answered(query: CallbackQuery, bot_data: MutableMapping[Any, Any]) -> bool:
    """Whether ``query`` got its answer already."""
    return query.id in _answered(bot_data)


async def answer_once(
    query: CallbackQuery, bot_data: MutableMapping[Any, Any], text: str | None = None
) -> bool:
    """Answer ``query`` (``text`` as its toast) unless it was answered; True if answered now.

    Telegram refusing the answer (the query expired) is logged, not raised: the press was
    handled, and an error handler must not try a second answer.
    """
    seen = _answered(bot_data)
    if query.id in seen:
        return False
    seen[query.id] = None
    while len(seen) > ANSWERED_MAX:
        seen.popitem(last=False)
    try:
        await query.answer(text[:ALERT_MAX] if text else None)
    except TelegramError:
        log.warning("could not answer callback query %s", query.id, exc_info=True)
    return True


async def on_unknown_button(update: Update, context: BotContext) -> None:
    """A press whose data no handler knows (the bot never made it, or it is cut): one
    sentence as its answer; nothing runs."""
    query = update.callback_query
    if query is None:
        return
    lang = context.deps.lang(update)
    await answer_once(query, context.bot_data, say("button_stale", lang))
