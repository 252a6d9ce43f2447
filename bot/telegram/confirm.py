"""Confirming memories: proposals with buttons, button presses, replies, and ✏️ Edit.

Only a user event answers a proposal (docs/trust.md, "Where each promise is kept"): a press on its
button, a reply to its message, /confirm, or a short word typed when exactly one proposal is
waiting and it is the bot's last message to the user (``BotDeps.last_shown``). A bare word
with several waiting gets "which one?" and the proposals again. The ✏️ Edit state lasts only
while its proposal waits; after that the next message is ordinary chat.

The buttons under /memory (📌 pin, 📍 unpin, ✏️ edit, 🗑 forget) and under the weekly fading
notice (✅ keep) are the user's decisions too (``mm:<code>:<memory id>``); after ✏️ the user's
next message is that memory's new text. ↩️ Undo (``ud:memory:<id>``, ``ud:reminder:<id>``)
takes back what a typed /remember or /remind did at once.
"""

from __future__ import annotations

import asyncio
import logging
import time

from telegram import Bot, ForceReply, Update

from agent.types import ProposalView
from bot.frontdesk.desk import outcome_text
from bot.frontdesk.ports import Answer, BackendError, Decision, Via
from bot.frontdesk.texts import say
from bot.telegram.access import in_group
from bot.telegram.context import REVISE_WINDOW, BotContext, BotDeps, user_key_of
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
SHORT_REPLY = 12  # a bare confirm word ("確認", "yes") is short; longer text goes to the agent


async def show_proposals(
    bot: Bot, deps: BotDeps, chat_id: int, key: str, proposals: tuple[ProposalView, ...], lang: str
) -> None:
    """Send each proposal with its buttons and tie the message to it (so replies match)."""
    for p in proposals:
        message = await send_proposal(bot, chat_id, p, lang)
        await asyncio.to_thread(deps.backend.attach, key, p.proposal_id, str(message.message_id))
        deps.last_shown[key] = p.proposal_id


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
        deps.awaiting_edit[key] = proposal_id
        deps.awaiting_revise.pop(key, None)  # one edit prompt at a time
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
        deps.awaiting_revise[key] = (entry_id, time.monotonic())
        deps.awaiting_edit.pop(key, None)  # one edit prompt at a time
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


async def try_confirm_flow(update: Update, context: BotContext, text: str, lang: str) -> bool:
    """Handle a private message that answers a proposal; False when it is ordinary chat."""
    message, deps, key = update.effective_message, context.deps, user_key_of(update)
    if message is None or update.effective_chat is None:
        return False
    chat_id = update.effective_chat.id
    # Whatever this message turns out to be, the bot's next message answers it.
    shown_last = deps.last_shown.pop(key, None)
    revising, pressed = deps.awaiting_revise.pop(key, ("", 0.0))
    if revising and time.monotonic() - pressed < REVISE_WINDOW:
        # The message after ✏️ under /memory is that memory's new text.
        try:
            said = await deps.desk.revise(key, revising, text, lang, via="reply")
        except BackendError as exc:  # refused (a secret, noise, archived): say why
            said = exc.said(lang)
        await send_text(context.bot, chat_id, said)
        return True
    live = {p.proposal_id for p in await asyncio.to_thread(deps.backend.pending, key)}
    editing = deps.awaiting_edit.pop(key, None)
    if editing is not None and editing in live:
        await _edit(context.bot, deps, chat_id, key, editing, text, lang, "edit")
        return True
    decision = deps.backend.classify(text) if len(text) <= SHORT_REPLY else None
    replied = message.reply_to_message
    if replied is not None:
        found = await asyncio.to_thread(
            deps.backend.proposal_for_message, key, str(replied.message_id)
        )
        if found is not None and decision is not None:
            outcome = await asyncio.to_thread(
                deps.backend.decide, key, found, decision, via="reply"
            )
            result = outcome_text(outcome, lang)
            await edit_outcome(context.bot, chat_id, replied.message_id, result)
            await send_text(context.bot, chat_id, result, reply_to=message.message_id)
            return True
        if found is not None and found in live:  # any other reply to it is its new text
            await _edit(context.bot, deps, chat_id, key, found, text, lang, "reply")
            return True
    if decision is None:
        return False
    answer = await context.deps.desk.answer_word(key, decision, lang, shown_last)
    if answer is None:
        return False  # nothing waits: "ok" is ordinary chat
    await show_answer(context.bot, deps, chat_id, key, answer, lang)
    return True


async def _edit(
    bot: Bot, deps: BotDeps, chat_id: int, key: str, pid: str, text: str, lang: str, via: Via
) -> None:
    """The user's new text for proposal ``pid``: show it again, or say why not."""
    try:
        outcome = await asyncio.to_thread(deps.backend.edit, key, pid, text, via=via)
    except BackendError as exc:  # the new text is refused (a secret, noise, a duplicate)
        await send_text(bot, chat_id, exc.said(lang))
        return
    if outcome.status == "edited" and outcome.proposal is not None:
        await show_proposals(bot, deps, chat_id, key, (outcome.proposal,), lang)
    else:
        await send_text(bot, chat_id, outcome_text(outcome, lang))
