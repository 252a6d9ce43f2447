"""Confirming memories: proposals with buttons, button presses, replies, and ✏️ Edit.

Only a user event answers a proposal (docs/trust.md, "Where each promise is kept"): a press on its
button, a reply to its message, /confirm, or a short word typed when exactly one proposal is
waiting and it is the bot's last message to the user (bot/frontdesk/shown.py). A bare word
with several waiting gets "which one?" and the proposals again. The ✏️ Edit state lasts only
while its proposal waits; after that the next message is ordinary chat. Typed answers are
routed by the front desk's steps (bot/frontdesk/steps.py); this module has the buttons.

The buttons under /memory (📌 pin, 📍 unpin, ✏️ edit, 🗑 forget) and under the weekly fading
notice (✅ keep) are the user's decisions too (``mm:<code>:<memory id>``); after ✏️ the user's
next message is that memory's new text. ↩️ Undo (``ud:memory:<id>``, ``ud:reminder:<id>``)
takes back what a typed /remember or /remind did at once.
"""

from __future__ import annotations

import asyncio
import logging

from telegram import Bot, ForceReply, Update

from agent.types import ProposalView
from bot.frontdesk.desk import outcome_text
from bot.frontdesk.ports import Answer, BackendError, Decision
from bot.frontdesk.texts import say
from bot.telegram.access import in_group
from bot.telegram.context import BotContext, BotDeps, user_key_of
from bot.telegram.presses import answer_once
from bot.telegram.reminders import show_reminders
from bot.telegram.sending import (
    buttons_markup,
    edit_outcome,
    send_document,
    send_proposal,
    send_text,
)

log = logging.getLogger(__name__)


async def show_proposals(
    bot: Bot, deps: BotDeps, chat_id: int, key: str, proposals: tuple[ProposalView, ...], lang: str
) -> None:
    """Send each proposal with its buttons and tie the message to it (so replies match)."""
    for p in proposals:
        message = await send_proposal(bot, chat_id, p, lang)
        await asyncio.to_thread(deps.backend.attach, key, p.proposal_id, str(message.message_id))
        deps.shown.note(key, p.proposal_id)


async def show_answer(
    bot: Bot, deps: BotDeps, chat_id: int, key: str, answer: Answer, lang: str
) -> None:
    """Send an :class:`Answer`: its text, its document, its notices, then its proposals."""
    deps.spoke(key)
    if answer.text and answer.document is None:
        await send_text(bot, chat_id, answer.text, markup=buttons_markup(answer.buttons))
    if answer.document is not None:
        await send_document(bot, chat_id, answer.document, answer.text)
    for notice in answer.notices:
        await send_text(bot, chat_id, notice)
    await show_proposals(bot, deps, chat_id, key, answer.proposals, lang)
    await show_reminders(bot, deps, chat_id, key, answer.reminders, lang)


async def on_button(update: Update, context: BotContext) -> None:
    """A press on ✅ / ✏️ / 🗑 under a proposal."""
    query = update.callback_query
    if query is None or query.data is None or update.effective_chat is None:
        return
    deps, key = context.deps, user_key_of(update)
    lang = context.deps.lang(update)
    _, code, proposal_id = [*query.data.split(":", 2), "", ""][:3]
    chat_id = update.effective_chat.id
    if in_group(update):  # a proposal is private: never answered (nor its text shown) there
        await answer_once(query, context.bot_data, say("group_private", lang))
        return
    if code == "e":
        waiting = await asyncio.to_thread(deps.backend.pending, key)
        if all(p.proposal_id != proposal_id for p in waiting):
            await answer_once(query, context.bot_data, say("missing", lang))
            return
        deps.shown.edit(key, proposal_id)  # one edit prompt at a time
        await answer_once(query, context.bot_data)
        deps.spoke(key)
        await context.bot.send_message(
            chat_id, say("edit_prompt", lang), reply_markup=ForceReply(selective=True)
        )
        return
    decision: Decision = "confirm" if code == "c" else "replace" if code == "r" else "reject"
    outcome = await asyncio.to_thread(
        deps.backend.decide, key, proposal_id, decision, via="button"
    )
    text = outcome_text(outcome, lang)
    await answer_once(query, context.bot_data, text)
    if query.message is not None:
        await edit_outcome(context.bot, chat_id, query.message.message_id, text)


async def on_memory_button(update: Update, context: BotContext) -> None:
    """A press on 📌 / 📍 / ✏️ / 🗑 under /memory, or ✅ keep under the fading notice."""
    query = update.callback_query
    if query is None or query.data is None or update.effective_chat is None:
        return
    deps, key = context.deps, user_key_of(update)
    lang = context.deps.lang(update)
    _, code, entry_id = [*query.data.split(":", 2), "", ""][:3]
    if in_group(update):  # memories are never shown or changed in a group
        await answer_once(query, context.bot_data, say("group_private", lang))
        return
    deps.spoke(key)
    if code == "e":
        deps.shown.revise(key, entry_id)  # one edit prompt at a time
        await answer_once(query, context.bot_data)
        await context.bot.send_message(
            update.effective_chat.id,
            say("revise_prompt", lang, entry_id=entry_id),
            reply_markup=ForceReply(selective=True),
        )
        return
    said = await deps.desk.memory_button(key, code, entry_id, lang)
    await answer_once(query, context.bot_data, said)
    await send_text(context.bot, update.effective_chat.id, said)


async def on_undo_button(update: Update, context: BotContext) -> None:
    """A press on ↩️ Undo under what a typed /remember or /remind did at once."""
    query = update.callback_query
    if query is None or query.data is None or update.effective_chat is None:
        return
    deps, key, lang = context.deps, user_key_of(update), context.deps.lang(update)
    if in_group(update):  # only ever sent in a private chat
        await answer_once(query, context.bot_data, say("group_private", lang))
        return
    undone = True
    try:
        said = await deps.backend.undo(key, lang, query.data.removeprefix("ud:"))
    except BackendError as exc:  # too late, taken back already, or not the last act any more
        said, undone = exc.said(lang), False
    await answer_once(query, context.bot_data, said)
    deps.spoke(key)
    # The message that said it was done now says it is undone (a refusal leaves it as it is).
    if undone and query.message is not None:
        await edit_outcome(context.bot, update.effective_chat.id, query.message.message_id, said)
