"""The one error handler: log with context, tell the user one short sentence."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import TelegramError

from agent.errors import is_disk_full
from agent.memory_view import file_problem_notice, problem_topic
from bot.frontdesk.texts import say
from bot.telegram.context import BotContext, user_key_of
from bot.telegram.presses import answer_once
from memory.base.users import UserPaths
from memory.errors import UnreadableFileError

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
    user, message = update.effective_user, update.effective_message
    said = (message.text or message.caption or "") if message is not None else ""
    lang = context.deps.lang(update, said)
    context.deps.spoke(user_key_of(update))  # the apology, not a proposal, is now the last word
    error = context.error
    text = say("disk_full" if is_disk_full(error) else "error", lang)
    if isinstance(error, UnreadableFileError) and user is not None:  # say what to fix
        root = UserPaths.of(context.deps.settings.data_dir, f"telegram_{user.id}").root
        text = file_problem_notice(error, problem_topic(error, root), lang)
    try:
        query = update.callback_query
        # A press is answered once: by the apology, unless its handler answered it already
        # (then the apology is a message in the chat).
        if query is None or not await answer_once(query, context.bot_data, text):
            await context.bot.send_message(update.effective_chat.id, text)
    except TelegramError:
        log.warning("could not tell the user about the error", exc_info=True)
