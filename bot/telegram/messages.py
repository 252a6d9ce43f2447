"""Conversation: text goes through the front desk's steps; anything else is refused."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from telegram import Message, Update

from agent.reminders.desk import Card
from agent.types import IncomingMessage, ProposalView
from bot.frontdesk.ports import Answer
from bot.frontdesk.steps import Line, run_line
from bot.frontdesk.texts import help_text, say
from bot.telegram.access import in_group
from bot.telegram.confirm import show_answer, show_proposals
from bot.telegram.context import BotContext, user_key_of
from bot.telegram.reminders import send_card, show_reminders
from bot.telegram.sending import edit_outcome, send_text, typing
from bot.telegram.streaming import DraftStream
from history.sessions import group_session_id


@dataclass(slots=True)
class TelegramOut:
    """The front desk's transport for one Telegram message: messages, buttons, drafts."""

    context: BotContext
    message: Message
    chat_id: int
    key: str
    text: str  # the message as written (the steps see it stripped)

    async def say(self, text: str, *, quote: bool = False) -> None:
        """Send a text (as a reply to the user's message when ``quote``)."""
        reply_to = self.message.message_id if quote else None
        await send_text(self.context.bot, self.chat_id, text, reply_to=reply_to)
        self.context.deps.spoke(self.key)

    async def restate(self, message_id: str, text: str) -> None:
        """The replied-to message now shows the outcome instead of its buttons."""
        await edit_outcome(self.context.bot, self.chat_id, int(message_id), text)

    async def card(self, card: Card) -> None:
        """A reminder card with its buttons."""
        await send_card(self.context.bot, self.context.deps, self.chat_id, self.key, card)

    async def proposals(self, proposals: tuple[ProposalView, ...], lang: str) -> None:
        """Proposals with their buttons, each tied to its message."""
        deps = self.context.deps
        await show_proposals(self.context.bot, deps, self.chat_id, self.key, proposals, lang)

    async def answer(self, answer: Answer, lang: str) -> None:
        """An answer with its document, notices, proposals and reminders."""
        deps = self.context.deps
        await show_answer(self.context.bot, deps, self.chat_id, self.key, answer, lang)

    def help(self, lang: str) -> str:
        """/help (commands reach Telegram's CommandHandlers, not this transport)."""
        return help_text(lang)

    async def chat(self, line: Line) -> None:
        """Ask the agent; private chats see the reply drafted as it is written."""
        bot, deps, message = self.context.bot, self.context.deps, self.message
        chat_id = self.chat_id
        group, key, lang = line.in_group, line.user_key, line.lang
        replied = message.reply_to_message
        incoming = IncomingMessage(
            user_key=key,
            text=self.text,
            time=(message.date or datetime.now(UTC)).astimezone(),
            message_id=str(message.message_id),
            reply_to_id=str(replied.message_id) if replied else "",
            language=lang,
            in_group=group,
            group_session=group_session_id("telegram", chat_id) if group else "",
        )
        # Private chats see the reply as it is written (drafts); the final message follows.
        stream = None if group else DraftStream(bot, chat_id, message.message_id)
        async with typing(bot, chat_id):
            try:
                reply = await deps.backend.respond(incoming, stream)
            finally:
                if stream is not None:
                    await stream.close()
        await send_text(bot, chat_id, reply.text, reply_to=message.message_id if group else None)
        for notice in reply.notices:
            await send_text(bot, chat_id, notice)
        if not group:
            await show_proposals(bot, deps, chat_id, key, reply.proposals, lang)
            await show_reminders(bot, deps, chat_id, key, reply.reminders, lang)


async def on_text(update: Update, context: BotContext) -> None:
    """One text message: the front desk's steps answer it (a reply, an edit, or chat)."""
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
    key, replied = user_key_of(update), message.reply_to_message
    line = Line(
        key,
        text.strip(),
        lang,
        in_group=group,
        reply_to=str(replied.message_id) if replied is not None else None,
    )
    await run_line(context.deps.front, line, TelegramOut(context, message, chat.id, key, text))


async def on_other(update: Update, context: BotContext) -> None:
    """Stickers, photos, voice…: say that only text works for now."""
    message = update.effective_message
    if message is None:
        return
    lang = context.deps.lang(update, message.caption or "")
    context.deps.spoke(user_key_of(update))
    await message.reply_text(say("text_only", lang))
