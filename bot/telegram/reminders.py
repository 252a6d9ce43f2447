"""Reminders on Telegram: commands, buttons, replies, birthday offers, the JobQueue and sending.

Handlers are thin over the shared :class:`~agent.reminders.desk.ReminderDesk`. Each
reminder is one PTB ``run_once`` job named (and with the APScheduler id) ``reminder:<id>``, so
rescheduling replaces it; a job never misfires away (it runs late instead) and the claim in
``pcai.db`` keeps a second wake-up from sending twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest, Forbidden, RetryAfter
from telegram.ext import CallbackQueryHandler, CommandHandler, TypeHandler, filters

from agent.reminders.desk import REMINDER_COMMANDS, Card, ReminderDesk
from agent.reminders.errors import NotDeliveredError
from agent.reminders.scheduler import Dispatch
from agent.reminders.types import Reminder
from agent.types import ReminderView
from bot.frontdesk.texts import say
from bot.telegram.access import in_group
from bot.telegram.context import DEPS, BotApp, BotContext, BotDeps, user_key_of
from bot.telegram.presses import answer_once
from bot.telegram.sending import edit_outcome, send_text

if TYPE_CHECKING:
    from agent.reminders.service import ReminderService

log = logging.getLogger(__name__)


def keyboard(card: Card) -> InlineKeyboardMarkup | None:
    """The card's buttons as an inline keyboard (None when it has none)."""
    if not card.buttons:
        return None
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(b.label, callback_data=b.data) for b in row]
            for row in card.buttons
        ]
    )


async def send_card(bot: Bot, deps: BotDeps, chat_id: int, key: str, card: Card) -> None:
    """Send one card; a proposal or offer becomes what a bare yes / a reply answers."""
    text = f"{card.text} · {card.hint}" if card.hint else card.text
    sent = await send_text(bot, chat_id, text, markup=keyboard(card))
    deps.spoke(key)
    if card.answers and deps.reminders is not None:
        deps.reminders.tie(key, str(sent[-1].message_id), card.answers)
        deps.last_shown[key] = card.answers


async def show_reminders(
    bot: Bot, deps: BotDeps, chat_id: int, key: str, views: tuple[ReminderView, ...], lang: str
) -> None:
    """Show the reminders the model proposed in a turn, each with ✅ / 🗑."""
    if deps.reminders is None:
        return
    for view in views:
        await send_card(bot, deps, chat_id, key, deps.reminders.proposal_card(view, lang))


async def on_reminder_command(update: Update, context: BotContext) -> None:
    """``/remind``, ``/reminders``, ``/tz``, ``/briefing`` for their sender."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or not message.text:
        return
    name = message.text.split()[0][1:].split("@")[0].lower()
    arg = message.text.partition(" ")[2].strip()
    lang = context.deps.lang(update, arg)
    deps, key = context.deps, user_key_of(update)
    if in_group(update):
        await send_text(context.bot, chat.id, say("group_private", lang))
        return
    if deps.reminders is None:
        await send_text(context.bot, chat.id, say("reminder_unavailable", lang))
        return
    for card in await deps.reminders.command(key, name, arg, lang):
        await send_card(context.bot, deps, chat.id, key, card)


async def on_reminder_button(update: Update, context: BotContext) -> None:
    """A press on a reminder button: confirm / discard, done / snooze, cancel, birthday."""
    query = update.callback_query
    if query is None or query.data is None or update.effective_chat is None:
        return
    deps, key, chat_id = context.deps, user_key_of(update), update.effective_chat.id
    lang = context.deps.lang(update)
    if deps.reminders is None or in_group(update):
        await answer_once(query, context.bot_data, say("reminder_unavailable", lang))
        return
    pressed = await deps.reminders.press(key, query.data, lang)
    await answer_once(query, context.bot_data, pressed.toast)
    if query.message is not None and pressed.text:
        mid = query.message.message_id
        if pressed.buttons:
            markup = keyboard(Card("", pressed.buttons))
            with contextlib.suppress(BadRequest):
                await context.bot.edit_message_text(
                    pressed.text[:4096], chat_id=chat_id, message_id=mid, reply_markup=markup
                )
        else:
            await edit_outcome(context.bot, chat_id, mid, pressed.text)
    for card in pressed.cards:
        await send_card(context.bot, deps, chat_id, key, card)


async def offer_after_update(update: Update, context: BotContext) -> None:
    """After any update: offer a reminder for each memory just confirmed that names a date."""
    desk, chat = context.deps.reminders, update.effective_chat
    if desk is None or chat is None or in_group(update) or update.effective_user is None:
        return
    key = user_key_of(update)
    lang = context.deps.lang(update)
    for card in desk.take_offers(key, lang):
        await send_card(context.bot, context.deps, chat.id, key, card)


def add_reminder_handlers(application: BotApp) -> None:
    """Commands and buttons before the general ones (group 0); offers after them (group 1)."""
    application.add_handler(
        CommandHandler(
            list(REMINDER_COMMANDS), on_reminder_command, filters=filters.UpdateType.MESSAGE
        )
    )
    application.add_handler(CallbackQueryHandler(on_reminder_button, pattern=r"^rm:"))
    application.add_handler(TypeHandler(Update, offer_after_update), group=1)


# -- scheduling and sending ------------------------------------------------------------------
class JobQueueAdapter:
    """:class:`~agent.reminders.scheduler.ReminderScheduler` over PTB's JobQueue."""

    def __init__(self, queue: Any, dispatch: Dispatch) -> None:
        self.queue = queue
        self.dispatch = dispatch

    async def _run(self, context: Any) -> None:
        key = str(context.job.data)
        try:
            await self.dispatch(key)
        except Exception:  # one reminder's failure must not reach the other jobs
            log.exception("reminder wake-up %s failed", key)

    def schedule_at(self, when: datetime, key: str) -> None:
        """One ``run_once`` job per key; a new time replaces the old job."""
        self.queue.run_once(
            self._run,
            when,
            data=key,
            name=key,
            job_kwargs={"id": key, "replace_existing": True, "misfire_grace_time": None},
        )

    def cancel(self, key: str) -> None:
        """Remove the job ``key`` if it still waits."""
        from apscheduler.jobstores.base import JobLookupError

        with contextlib.suppress(JobLookupError):
            self.queue.scheduler.remove_job(key)


def _chat_of(user_key: str) -> int | None:
    kind, _, ident = user_key.partition("_")
    return int(ident) if kind == "telegram" and ident.isdigit() else None


def telegram_sender(application: BotApp, desk: ReminderDesk) -> Any:
    """The service's sender: the alert with Done / Snooze in the user's private chat."""

    async def send(reminder: Reminder, text: str) -> str:
        chat_id = _chat_of(reminder.user_key)
        if chat_id is None:
            raise NotDeliveredError(f"{reminder.user_key} is not a Telegram user")
        card = desk.alert_card(reminder, text)
        try:
            sent = await application.bot.send_message(
                chat_id, card.text, reply_markup=keyboard(card)
            )
        except (Forbidden, BadRequest, RetryAfter) as exc:  # refused: it did not arrive
            raise NotDeliveredError(str(exc)) from exc
        application.bot_data[DEPS].spoke(reminder.user_key)  # the alert is the last word now
        return str(sent.message_id)

    return send


def briefing_sender(application: BotApp, desk: ReminderDesk) -> Any:
    """The service's briefing hook: write today's briefing and send it."""

    async def brief(user_key: str, day: date) -> None:
        chat_id = _chat_of(user_key)
        if chat_id is None or desk.writer is None:
            return
        text = await desk.writer.write(user_key, day)
        await send_text(application.bot, chat_id, text)
        application.bot_data[DEPS].spoke(user_key)

    return brief


def wire_reminders(application: BotApp, service: ReminderService) -> bool:
    """Put the reminder service on the bot's JobQueue; start it once the queue runs."""
    deps: BotDeps | None = application.bot_data.get(DEPS)
    desk = deps.reminders if deps is not None else None
    queue = application.job_queue
    if queue is None or desk is None:
        log.warning("reminders are off: no JobQueue or no reminder service")
        return False
    service.scheduler = JobQueueAdapter(queue, service.on_due)
    service.owns = lambda user_key: _chat_of(user_key) is not None
    service.sender = telegram_sender(application, desk)
    service.on_briefing = briefing_sender(application, desk)

    async def start(context: Any) -> None:
        report = await asyncio.to_thread(service.start)
        log.info(
            "reminders: %d scheduled (%d late, %d of unknown delivery), %d briefings",
            report.scheduled,
            len(report.late),
            len(report.uncertain),
            report.briefings,
        )

    queue.run_once(start, 0, name="reminders:start")
    return True
