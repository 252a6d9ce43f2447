"""Sending to Telegram so that a reply always arrives: split, plain fallback, typing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator

from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeChat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MenuButtonWebApp,
    Message,
    WebAppInfo,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, TelegramError

from agent.texts import catalogue_language
from agent.types import ProposalView
from bot.frontdesk.ports import Button, Document
from bot.frontdesk.texts import (
    BUTTONS,
    COMMAND_NAMES,
    CONFLICT_BUTTONS,
    proposal_text,
    say,
    split_text,
)

log = logging.getLogger(__name__)
_TAG = re.compile(r"</?[a-z]+>")
TYPING_EVERY = 4.0  # Telegram shows "typing" for about 5 seconds


def proposal_keyboard(proposal_id: str, lang: str, conflict: bool = False) -> InlineKeyboardMarkup:
    """✅ Confirm / ✏️ Edit / 🗑 Discard for one proposal (callback data ``pm:<c|e|d>:<id>``).

    A proposal that conflicts with a memory gets ➕ Add / 🔁 Replace (``pm:r:<id>``) instead
    of ✅ Confirm: Replace deprecates the old memory and links ``supersedes``.
    """
    key = catalogue_language(lang)
    labels, codes = (CONFLICT_BUTTONS[key], "cred") if conflict else (BUTTONS[key], "ced")
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(label, callback_data=f"pm:{code}:{proposal_id}"[:64])
                for label, code in zip(labels, codes, strict=True)
            ]
        ]
    )


async def set_menu_button(bot: Bot, url: str, lang: str, chat_id: int | None = None) -> None:
    """The menu button opening the memory page as a Mini App, its label in ``lang``: the
    default for every chat, or one person's chat (their language, once known)."""
    button = MenuButtonWebApp(say("menu_page", lang), WebAppInfo(url))
    try:
        await bot.set_chat_menu_button(chat_id=chat_id, menu_button=button)
    except TelegramError as exc:
        log.warning("could not set the menu button to the memory page: %s", exc)


async def set_chat_commands(bot: Bot, chat_id: int, lang: str) -> None:
    """One person's command menu in their language (the default menus follow the phone's
    language code, which may not be the one they chose or write)."""
    commands = [BotCommand(n, say(f"command_{n}", lang)) for n in COMMAND_NAMES]
    try:
        await bot.set_my_commands(commands, scope=BotCommandScopeChat(chat_id))
    except TelegramError as exc:
        log.warning("could not set the command menu of a chat: %s", exc)


def buttons_markup(rows: tuple[tuple[Button, ...], ...]) -> InlineKeyboardMarkup | None:
    """Rows of ``(label, callback data)`` as an inline keyboard (None when there are none)."""
    if not rows:
        return None
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(label, callback_data=data[:64]) for label, data in row]
            for row in rows
        ]
    )


async def send_text(
    bot: Bot,
    chat_id: int,
    text: str,
    *,
    html: bool = False,
    reply_to: int | None = None,
    markup: InlineKeyboardMarkup | None = None,
) -> list[Message]:
    """Send ``text`` in pieces of at most 4,096 characters; the markup goes on the last one.

    With ``html`` the text is sent as HTML (callers escape what they did not write) and,
    should Telegram reject the markup, again as plain text without the tags.
    """
    pieces = split_text(text) or ["…"]
    sent: list[Message] = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        mk = markup if last else None
        to = reply_to if i == 0 else None
        try:
            sent.append(
                await bot.send_message(
                    chat_id,
                    piece,
                    parse_mode=ParseMode.HTML if html else None,
                    reply_markup=mk,
                    reply_to_message_id=to,
                )
            )
        except BadRequest as exc:
            if not html:
                raise
            log.warning("Telegram rejected HTML (%s); sending plain text", exc)
            sent.append(
                await bot.send_message(
                    chat_id, _TAG.sub("", piece), reply_markup=mk, reply_to_message_id=to
                )
            )
    return sent


async def send_proposal(bot: Bot, chat_id: int, p: ProposalView, lang: str) -> Message:
    """Show one proposal with its three buttons."""
    keyboard = proposal_keyboard(p.proposal_id, lang, conflict=bool(p.conflicts_shown))
    messages = await send_text(bot, chat_id, proposal_text(p, lang), markup=keyboard)
    return messages[-1]


async def send_document(bot: Bot, chat_id: int, doc: Document, caption: str) -> None:
    """Send a file; where files are refused (or unsupported), send the content as text."""
    try:
        await bot.send_document(
            chat_id, doc.content.encode("utf-8"), filename=doc.filename, caption=caption
        )
    except TelegramError as exc:
        log.info("sending %s as a file failed (%s); sending it as text", doc.filename, exc)
        await send_text(bot, chat_id, f"{caption}\n\n{doc.content}")


async def edit_outcome(bot: Bot, chat_id: int, message_id: int, text: str) -> None:
    """Replace a proposal message with its outcome and drop the buttons."""
    try:
        await bot.edit_message_text(text[:4096], chat_id=chat_id, message_id=message_id)
    except BadRequest as exc:
        # "message is not modified" or too old to edit: say it in a new message instead.
        log.info("could not edit message %s: %s", message_id, exc)
        await send_text(bot, chat_id, text)


@contextlib.asynccontextmanager
async def typing(bot: Bot, chat_id: int) -> AsyncIterator[None]:
    """Show "typing…" in the chat until the block ends."""

    async def keep_typing() -> None:
        while True:
            with contextlib.suppress(TelegramError):
                await bot.send_chat_action(chat_id, ChatAction.TYPING)
            await asyncio.sleep(TYPING_EVERY)

    task = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
