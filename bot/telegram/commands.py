"""Slash commands: thin wrappers around the shared :class:`~bot.frontdesk.desk.Desk`."""

from __future__ import annotations

from telegram import Update

from bot.frontdesk.texts import say
from bot.telegram.access import in_group
from bot.telegram.confirm import show_answer
from bot.telegram.context import MINI_APP, BotContext, user_key_of
from bot.telegram.sending import send_text, set_chat_commands, set_menu_button, typing

PUBLIC = frozenset({"start", "help"})  # the only commands that show no memory (groups)
SLOW = frozenset({"new", "history"})  # may call the LLM: show "typing…"


async def on_command(update: Update, context: BotContext) -> None:
    """Run the command named in the message for its sender."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or not message.text:
        return
    name = message.text.split()[0][1:].split("@")[0].lower()
    arg = message.text.partition(" ")[2].strip()
    lang = context.deps.lang(update, arg)
    if in_group(update) and name not in PUBLIC:
        await send_text(context.bot, chat.id, say("group_private", lang))
        return
    key, deps = user_key_of(update), context.deps
    if name in SLOW:
        async with typing(context.bot, chat.id):
            answer = await deps.desk.command(key, name, arg, lang)
    else:
        answer = await deps.desk.command(key, name, arg, lang)
    await show_answer(context.bot, deps, chat.id, key, answer, lang)
    if name in ("start", "lang") and not in_group(update):
        # this person's menus in their language, /lang's new one included
        now = deps.backend.languages.of(key)
        await set_chat_commands(context.bot, chat.id, now)
        mini_app = context.bot_data.get(MINI_APP)
        if mini_app:  # the memory page's menu button, when the page is served on https
            await set_menu_button(context.bot, mini_app, now, chat.id)
