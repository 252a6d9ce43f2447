"""The one error handler: log with context, tell the user one short sentence."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import TelegramError

from bot.telegram.context import BotContext, user_key_of
from bot.telegram.texts import detect_language, say

log = logging.getLogger(__name__)


async def on_error(update: object, context: BotContext) -> None:
    """Log the exception with who/where (never the message text) and apologise once."""
    where = "no update"
    if isinstance(update, Update):
        uid = update.effective_user.id if update.effective_user else None
        cid = update.effective_chat.id if update.effective_chat else None
        kind = "callback" if update.callback_query else "message"
        where = f"update {update.update_id} ({kind}) user {uid} chat {cid}"
    log.error("error handling %s", where, exc_info=context.error)
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    user = update.effective_user
    lang = detect_language(user.language_code if user else None)
    context.deps.spoke(user_key_of(update))  # the apology, not a proposal, is now the last word
    try:
        if update.callback_query:
            await update.callback_query.answer(say("error", lang))
        else:
            await context.bot.send_message(update.effective_chat.id, say("error", lang))
    except TelegramError:
        log.warning("could not tell the user about the error", exc_info=True)
