"""Conversation: text goes to the agent (or the confirm flow); anything else is refused."""

from __future__ import annotations

from datetime import UTC, datetime

from telegram import Update

from agent.types import IncomingMessage
from bot.frontdesk.texts import say
from bot.telegram.access import in_group
from bot.telegram.confirm import show_proposals, try_confirm_flow
from bot.telegram.context import BotContext, user_key_of
from bot.telegram.reminders import show_reminders, try_reminder_reply
from bot.telegram.sending import send_text, typing
from bot.telegram.streaming import DraftStream
from history.sessions import group_session_id


async def on_text(update: Update, context: BotContext) -> None:
    """One text message: answer a proposal, or ask the agent and send its reply."""
    message, chat, user = update.effective_message, update.effective_chat, update.effective_user
    said = message.text if message is not None and message.text is not None else None
    if message is not None and said is None:
        said = message.caption  # a photo or file with a caption: the caption is the message
    if message is None or chat is None or user is None or said is None:
        return
    text, group = said, in_group(update)
    if group and context.bot.username:
        text = text.replace(f"@{context.bot.username}", "").strip()
    lang = context.deps.lang(update, text)
    if not group and await try_reminder_reply(update, context, text.strip(), lang):
        return
    if not group and await try_confirm_flow(update, context, text.strip(), lang):
        return
    key, deps = user_key_of(update), context.deps
    replied = message.reply_to_message
    incoming = IncomingMessage(
        user_key=key,
        text=text,
        time=(message.date or datetime.now(UTC)).astimezone(),
        message_id=str(message.message_id),
        reply_to_id=str(replied.message_id) if replied else "",
        language=lang,
        in_group=group,
        group_session=group_session_id("telegram", chat.id) if group else "",
    )
    # Private chats see the reply as it is written (drafts); the final message follows.
    stream = None if group else DraftStream(context.bot, chat.id, message.message_id)
    async with typing(context.bot, chat.id):
        try:
            reply = await deps.backend.respond(incoming, stream)
        finally:
            if stream is not None:
                await stream.close()
    await send_text(
        context.bot, chat.id, reply.text, reply_to=message.message_id if group else None
    )
    for notice in reply.notices:
        await send_text(context.bot, chat.id, notice)
    if not group:
        await show_proposals(context.bot, deps, chat.id, key, reply.proposals, lang)
        await show_reminders(context.bot, deps, chat.id, key, reply.reminders, lang)


async def on_other(update: Update, context: BotContext) -> None:
    """Stickers, photos, voice…: say that only text works for now."""
    message = update.effective_message
    if message is None:
        return
    lang = context.deps.lang(update, message.caption or "")
    context.deps.spoke(user_key_of(update))
    await message.reply_text(say("text_only", lang))
