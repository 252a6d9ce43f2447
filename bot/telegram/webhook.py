"""Webhook mode: Telegram posts each update to PCAI's own web server instead of being polled.

python-telegram-bot's webhook server (tornado) takes the posts; it refuses one without the
``X-Telegram-Bot-Api-Secret-Token`` header PCAI gave Telegram in ``setWebhook`` (403), so
only Telegram can hand the bot an update. The updates then go through the same per-user
queues as polled ones.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from telegram import Update

from bot.settings import Settings
from bot.telegram.context import BotApp

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Webhook:
    """Where Telegram posts (``url``) and what PCAI listens on to take it."""

    url: str
    listen: str
    port: int
    path: str
    secret_token: str


def webhook_of(settings: Settings) -> Webhook | None:
    """The webhook ``settings`` ask for, or None (long polling).

    Without a configured secret a new random one is made at each start: Telegram is given it
    by ``setWebhook`` every time, so nothing needs to keep it, and no post goes unchecked.
    """
    if not settings.telegram_webhook_url:
        return None
    path = settings.telegram_webhook_path or urlsplit(settings.telegram_webhook_url).path
    return Webhook(
        url=settings.telegram_webhook_url,
        listen=settings.telegram_webhook_listen,
        port=settings.telegram_webhook_port,
        path=path.strip("/"),
        secret_token=settings.telegram_webhook_secret_token or secrets.token_urlsafe(32),
    )


def run_webhook(application: BotApp, hook: Webhook) -> None:
    """Serve Telegram's posts until SIGINT/SIGTERM (the same stop as long polling's)."""
    log.info(
        "taking updates by webhook: Telegram posts to %s, served on %s:%d/%s",
        hook.url,
        hook.listen,
        hook.port,
        hook.path,
    )
    application.run_webhook(
        listen=hook.listen,
        port=hook.port,
        url_path=hook.path,
        webhook_url=hook.url,
        allowed_updates=Update.ALL_TYPES,
        drop_pending_updates=False,  # what Telegram holds while the bot was down is answered
        secret_token=hook.secret_token,
        stop_signals=None,
    )
