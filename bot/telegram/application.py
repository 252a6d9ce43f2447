"""Builds the Telegram Application: handlers, lifecycle hooks, long polling or a webhook.

Reads like python-telegram-bot's examples: a typed context, thin handlers per concern, one
error handler, ``post_init`` (commands, the background worker) and ``post_shutdown`` (worker
stopped, flush) hooks.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from telegram import BotCommand, Update
from telegram.ext import (
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)
from telegram.request import BaseRequest

from bot.frontdesk.desk import Desk
from bot.frontdesk.ports import Backend
from bot.frontdesk.texts import COMMANDS
from bot.settings import Settings
from bot.telegram.access import gate
from bot.telegram.commands import on_command
from bot.telegram.confirm import on_button, on_memory_button, on_undo_button
from bot.telegram.context import DEPS, MINI_APP, BotApp, BotContext, BotDeps
from bot.telegram.errors import on_error
from bot.telegram.messages import on_other, on_text
from bot.telegram.open_turns import OpenTurns
from bot.telegram.presses import on_unknown_button
from bot.telegram.queues import UserQueues
from bot.telegram.reminders import add_reminder_handlers
from bot.telegram.sending import set_menu_button as set_chat_menu_button
from bot.telegram.webhook import run_webhook, webhook_of

if TYPE_CHECKING:
    from bot.web.server import WebServer

log = logging.getLogger(__name__)
JobSetup = Callable[[BotApp], None]
WEB = "web"  # bot_data key of the memory page's server, when the bot serves one
BACKGROUND = "background"  # bot_data key of the deferred-work worker
QUEUES = "queues"  # bot_data key of the per-user update queues
# After SIGTERM/SIGINT the process ends within this many seconds, whatever a thread holds
# (a turn cut, a job or the worker mid-way: their rows stay queued for the next start).
STOP_DEADLINE = 5.0
PART_STOP_SECONDS = 1.0  # the page and the worker each get this long to stop before the flush


class Background(Protocol):
    """Work the app runs beside the handlers (the deferred-work worker)."""

    async def start(self) -> None:
        """Start (post_init)."""

    async def stop(self) -> None:
        """Stop and wait for it (post_shutdown, after the last update was handled)."""


async def post_init(application: BotApp) -> None:
    """Register the command menu in English (default) and Chinese."""
    await application.bot.set_my_commands([BotCommand(n, en) for n, _, en in COMMANDS])
    await application.bot.set_my_commands(
        [BotCommand(n, zh) for n, zh, _ in COMMANDS], language_code="zh"
    )
    background: Background | None = application.bot_data.get(BACKGROUND)
    if background is not None:
        await background.start()  # first what a previous process left in the queue
    install_stop_signals(application)
    await application.bot_data[QUEUES].replay()  # the turns a previous process never finished
    log.info(
        "PCAI bot started; serving %d allowed user(s)", len(application.bot_data[DEPS].allowed)
    )
    web: WebServer | None = application.bot_data.get(WEB)
    if web is not None and await web.start():
        await set_menu_button(application, web)


async def set_menu_button(application: BotApp, web: WebServer) -> None:
    """Open the memory page as a Mini App from the menu button (Telegram needs https); its
    label is English until a person's /start or /lang sets theirs (bot/telegram/commands.py)."""
    if not web.base_url.startswith("https://"):
        return
    application.bot_data[MINI_APP] = f"{web.base_url}/tg"
    await set_chat_menu_button(application.bot, application.bot_data[MINI_APP], "en")


async def post_shutdown(application: BotApp) -> None:
    """Stop the memory page and the worker, then flush sessions and pending state."""
    web: WebServer | None = application.bot_data.get(WEB)
    if web is not None:
        await _within(web.stop(), "the memory page")
    background: Background | None = application.bot_data.get(BACKGROUND)
    if background is not None:
        await _within(background.stop(), "the deferred-work worker")  # its rows stay queued
    await application.bot_data[DEPS].backend.flush()
    log.info("PCAI bot stopped; state flushed")


async def _within(stopping: Coroutine[Any, Any, None], what: str) -> None:
    """Wait for a part to stop, but not past :data:`PART_STOP_SECONDS` (the flush comes next)."""
    try:
        await asyncio.wait_for(stopping, PART_STOP_SECONDS)
    except TimeoutError:
        log.warning(
            "%s did not stop in %.0f s (a thread is busy): left behind", what, PART_STOP_SECONDS
        )


def build_application(
    settings: Settings,
    backend: Backend,
    *,
    request: BaseRequest | None = None,
    jobs: JobSetup | None = None,
    web: WebServer | None = None,
    background: Background | None = None,
    turns: OpenTurns | None = None,
) -> BotApp:
    """The Application for ``settings`` (``request`` replaces HTTP in offline tests).

    ``turns`` (pcai.db's ``open_turns``) keeps each message until it is handled, so a crash
    loses no turn (:mod:`bot.telegram.queues`).

    ``web``, the memory page, is started by ``post_init`` and stopped by ``post_shutdown``:
    it serves in the bot's event loop, over the same services.
    """
    deps = BotDeps(settings, backend, Desk(backend), allowed=frozenset(settings.allowed_users))
    queues = UserQueues(turns, allowed=deps.allowed, groups=settings.groups)
    context_types = ContextTypes(context=BotContext)
    builder: Any = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token)
        .base_url(settings.telegram_base_url)
        .base_file_url(settings.telegram_base_file_url)
        .context_types(context_types)
        .concurrent_updates(queues)
        .post_init(post_init)
        .post_shutdown(post_shutdown)
    )
    if request is not None:
        builder = builder.request(request).get_updates_request(request)
    application: BotApp = builder.build()
    application.bot_data[DEPS] = deps
    application.bot_data[QUEUES] = queues
    queues.attach(application)
    if web is not None:
        application.bot_data[WEB] = web
    if background is not None:
        application.bot_data[BACKGROUND] = background
    add_handlers(application)
    if jobs is not None:
        jobs(application)
    return application


def add_handlers(application: BotApp) -> None:
    """Gate first (group -1), then commands, buttons, text and everything else (no edits)."""
    application.add_handler(TypeHandler(Update, gate), group=-1)
    add_reminder_handlers(application)  # before the general commands: /remind, /tz, …
    names = [name for name, _, _ in COMMANDS]
    # New messages only: PTB's defaults also take edited ones, which must never run twice.
    new = filters.UpdateType.MESSAGE
    application.add_handler(CommandHandler(names, on_command, filters=new))
    # Any other /word in a private chat: one sentence saying it is unknown (groups: another
    # bot's command, not ours to answer).
    private = new & filters.COMMAND & filters.ChatType.PRIVATE
    application.add_handler(MessageHandler(private, on_command))
    application.add_handler(CallbackQueryHandler(on_button, pattern=r"^pm:"))
    application.add_handler(CallbackQueryHandler(on_memory_button, pattern=r"^mm:"))
    application.add_handler(CallbackQueryHandler(on_undo_button, pattern=r"^ud:"))
    # Last of the presses: data no handler above knows still gets its one answer.
    application.add_handler(CallbackQueryHandler(on_unknown_button))
    application.add_handler(MessageHandler(new & filters.TEXT & ~filters.COMMAND, on_text))
    application.add_handler(MessageHandler(new & filters.CAPTION, on_text))  # photo + words
    application.add_handler(
        MessageHandler(filters.UpdateType.MESSAGE & ~filters.TEXT & ~filters.COMMAND, on_other)
    )
    application.add_error_handler(on_error)


def run(application: BotApp, settings: Settings) -> None:
    """Take updates until SIGINT/SIGTERM: posted to the webhook when one is set, else polled.

    Both feed the same per-user queues, and both stop the same way
    (:func:`install_stop_signals`).
    """
    hook = webhook_of(settings)
    if hook is None:
        run_polling(application)
    else:
        run_webhook(application, hook)


def run_polling(application: BotApp) -> None:
    """Long-poll until SIGINT/SIGTERM (our handlers: :func:`install_stop_signals`)."""
    application.run_polling(
        allowed_updates=Update.ALL_TYPES, drop_pending_updates=False, stop_signals=None
    )


def install_stop_signals(application: BotApp) -> None:
    """SIGTERM/SIGINT: stop the queues (2 s for the turn in hand), then PTB's own stop.

    A hard deadline (:data:`STOP_DEADLINE`) ends the process even if a thread never returns
    (a job, the worker or a cut turn still computing): what it held stays queued in pcai.db.
    """
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    async def stop() -> None:
        await application.bot_data[QUEUES].stop()
        application.stop_running()

    def on_signal(signum: int) -> None:
        if stopping:
            return
        log.info("received %s: stopping", signal.Signals(signum).name)
        timer = threading.Timer(STOP_DEADLINE, _exit_now)
        timer.daemon = True
        timer.start()
        stopping.append(loop.create_task(stop()))

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal, signum)


def _exit_now() -> None:
    log.warning(
        "the stop took over %.0f s: exiting now; unfinished work stays queued", STOP_DEADLINE
    )
    logging.shutdown()
    os._exit(0)
