"""Who is served: allowed users only, groups only by policy and only when addressed; no edits."""

from __future__ import annotations

import logging

from telegram import Message, Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop

from bot.frontdesk.language import client_language
from bot.frontdesk.texts import say
from bot.telegram.context import BotContext
from bot.telegram.presses import answer_once

log = logging.getLogger(__name__)
MAX_REFUSED = 10_000  # strangers remembered as already told (the oldest is forgotten first)


async def gate(update: Update, context: BotContext) -> None:
    """Stop edits, strangers (one polite refusal, nothing stored) and unaddressed group talk.

    An edited message is ignored entirely, by design: it never starts a second turn, never
    re-runs a command, and in a group it could otherwise slip past the "addressed" check.
    """
    if update.edited_message is not None or update.edited_channel_post is not None:
        raise ApplicationHandlerStop
    user, chat = update.effective_user, update.effective_chat
    if user is None or user.is_bot:
        raise ApplicationHandlerStop
    if user.id not in context.deps.allowed:
        # Only the numeric id is logged, so the owner can add it to PCAI_ALLOWED_USERS.
        log.info("refused Telegram user %s (not in PCAI_ALLOWED_USERS)", user.id)
        lang = client_language(user.language_code) or "en"  # a stranger: nothing stored
        refused = context.deps.refused
        told = user.id in refused
        refused[user.id] = None
        while len(refused) > MAX_REFUSED:  # strangers must not grow this forever
            refused.popitem(last=False)
        if update.callback_query:
            said = None if told else say("stranger", lang)
            await answer_once(update.callback_query, context.bot_data, said)
        elif update.message and chat and chat.type == ChatType.PRIVATE and not told:
            await update.message.reply_text(say("stranger", lang))
        raise ApplicationHandlerStop
    query = update.callback_query
    if query is not None and (chat is None or query.data is None):
        # A press under an inline-mode message or a game: no button of this bot's.
        await answer_once(query, context.bot_data, say("button_stale", context.deps.lang(update)))
        raise ApplicationHandlerStop
    if chat is not None and chat.type != ChatType.PRIVATE:
        if not context.deps.settings.groups:
            raise ApplicationHandlerStop
        message = update.message
        if message is not None and not addressed_to_bot(message, context.bot.id, _name(context)):
            raise ApplicationHandlerStop


def _name(context: BotContext) -> str:
    try:
        return context.bot.username or ""
    except RuntimeError:  # the bot was never initialised (offline tests)
        return ""


def addressed_to_bot(message: Message, bot_id: int, username: str) -> bool:
    """A group message is for the bot when it replies to it, mentions it, or is a command."""
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    text = message.text or message.caption or ""
    if text.startswith("/"):
        return True
    return bool(username) and f"@{username.lower()}" in text.lower()


def in_group(update: Update) -> bool:
    """Whether the update comes from a group chat."""
    chat = update.effective_chat
    return chat is not None and chat.type != ChatType.PRIVATE
