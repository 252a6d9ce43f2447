"""Confirming memories: proposals with buttons, button presses, replies, and ✏️ Edit."""

from __future__ import annotations

import asyncio
import logging

from telegram import Bot, ForceReply, Update

from agent.types import ProposalView
from bot.telegram.context import BotContext, BotDeps, user_key_of
from bot.telegram.desk import outcome_text
from bot.telegram.ports import Answer, Decision
from bot.telegram.sending import edit_outcome, send_document, send_proposal, send_text
from bot.telegram.texts import detect_language, say

log = logging.getLogger(__name__)
SHORT_REPLY = 12  # a bare confirm word ("確認", "yes") is short; longer text goes to the agent


async def show_proposals(
    bot: Bot, deps: BotDeps, chat_id: int, key: str, proposals: tuple[ProposalView, ...], lang: str
) -> None:
    """Send each proposal with its buttons and tie the message to it (so replies match)."""
    for p in proposals:
        message = await send_proposal(bot, chat_id, p, lang)
        await asyncio.to_thread(deps.backend.attach, key, p.proposal_id, str(message.message_id))


async def show_answer(
    bot: Bot, deps: BotDeps, chat_id: int, key: str, answer: Answer, lang: str
) -> None:
    """Send an :class:`Answer`: its text, its document, its notices, then its proposals."""
    if answer.text and answer.document is None:
        await send_text(bot, chat_id, answer.text)
    if answer.document is not None:
        await send_document(bot, chat_id, answer.document, answer.text)
    for notice in answer.notices:
        await send_text(bot, chat_id, notice)
    await show_proposals(bot, deps, chat_id, key, answer.proposals, lang)


async def on_button(update: Update, context: BotContext) -> None:
    """A press on ✅ / ✏️ / 🗑 under a proposal."""
    query = update.callback_query
    if query is None or query.data is None or update.effective_chat is None:
        return
    deps, key = context.deps, user_key_of(update)
    lang = detect_language(query.from_user.language_code, getattr(query.message, "text", ""))
    _, code, proposal_id = [*query.data.split(":", 2), "", ""][:3]
    chat_id = update.effective_chat.id
    if code == "e":
        deps.awaiting_edit[key] = proposal_id
        await query.answer()
        await context.bot.send_message(
            chat_id, say("edit_prompt", lang), reply_markup=ForceReply(selective=True)
        )
        return
    decision: Decision = "confirm" if code == "c" else "reject"
    outcome = await asyncio.to_thread(deps.backend.decide, key, proposal_id, decision)
    text = outcome_text(outcome, lang)
    await query.answer(text[:190])
    if query.message is not None:
        await edit_outcome(context.bot, chat_id, query.message.message_id, text)


async def try_confirm_flow(update: Update, context: BotContext, text: str, lang: str) -> bool:
    """Handle a message that answers a proposal; False when it is ordinary chat."""
    message, deps, key = update.effective_message, context.deps, user_key_of(update)
    if message is None or update.effective_chat is None:
        return False
    chat_id = update.effective_chat.id
    if key in deps.awaiting_edit:
        proposal_id = deps.awaiting_edit.pop(key)
        outcome = await asyncio.to_thread(deps.backend.edit, key, proposal_id, text)
        if outcome.status == "edited" and outcome.proposal is not None:
            await show_proposals(context.bot, deps, chat_id, key, (outcome.proposal,), lang)
        else:
            await send_text(context.bot, chat_id, outcome_text(outcome, lang))
        return True
    decision = deps.backend.classify(text) if len(text) <= SHORT_REPLY else None
    if decision is None:
        return False
    replied = message.reply_to_message
    found: str | None = None
    shown_in: int | None = None
    if replied is not None:
        shown_in = replied.message_id
        found = await asyncio.to_thread(deps.backend.proposal_for_message, key, str(shown_in))
    if found is None:
        waiting = await asyncio.to_thread(deps.backend.pending, key)
        if len(waiting) != 1:
            return False  # nothing (or too much) to answer: let the agent handle the words
        found, shown_in = waiting[0].proposal_id, None
    outcome = await asyncio.to_thread(deps.backend.decide, key, found, decision)
    result = outcome_text(outcome, lang)
    if shown_in is not None:
        await edit_outcome(context.bot, chat_id, shown_in, result)
    await send_text(context.bot, chat_id, result, reply_to=message.message_id)
    return True
