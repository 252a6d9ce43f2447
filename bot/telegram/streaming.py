"""A reply shown in Telegram while it is written: Bot API drafts in private chats.

The agent's stream (:mod:`agent.streaming`) gives the reply as it may be shown so far. In a
private chat that text goes out as a message draft (``sendMessageDraft``) at most every
``DRAFT_EVERY`` seconds (drafts count against flood limits; a 429's ``retry_after`` is
honoured), and ``""`` (a tool round began) shows Telegram's "Thinking…" placeholder. The
caller sends the final message, whole and masked, as before. Where drafts are refused, the
reply is not streamed (the final message still comes); groups are not streamed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import warnings
from collections.abc import Callable
from datetime import timedelta

from telegram import Bot
from telegram.constants import MessageLimit
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError
from telegram.warnings import PTBDeprecationWarning

log = logging.getLogger(__name__)
DRAFT_EVERY = 1.0  # seconds between two drafts of one reply


class DraftStream:
    """The agent's reply sink for one private chat: throttled drafts (see the module doc)."""

    def __init__(
        self,
        bot: Bot,
        chat_id: int,
        draft_id: int,
        *,
        every: float = DRAFT_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.chat_id = chat_id
        self.draft_id = draft_id or 1  # Telegram wants a non-zero id
        self.every = every
        self.clock = clock
        self.sent: list[str] = []  # the drafts that went out, in order
        self.refused = False
        self._pending: str | None = None
        self._next = 0.0  # when the next draft may go
        self._task: asyncio.Task[None] | None = None

    async def __call__(self, text: str) -> None:
        """The reply as it may be shown now ("" for "Thinking…"); sent when it is time."""
        if self.refused:
            return
        self._pending = text[: MessageLimit.MAX_TEXT_LENGTH]
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        """Send the latest pending text once the throttle allows, until none is pending."""
        while self._pending is not None and not self.refused:
            wait = self._next - self.clock()
            if wait > 0:
                await asyncio.sleep(wait)
            text, self._pending = self._pending, None
            if text is None:
                return
            await self._send(text)

    async def _send(self, text: str) -> None:
        self._next = self.clock() + self.every
        try:
            await self.bot.send_message_draft(self.chat_id, self.draft_id, text)
            self.sent.append(text)
        except RetryAfter as exc:  # flood control: wait as told, then send the newest text
            self._next = self.clock() + max(_seconds(exc), self.every)
            if self._pending is None:
                self._pending = text
        except (BadRequest, Forbidden) as exc:  # drafts refused here: no streaming
            log.info("drafts refused in chat %s (%s); replying without them", self.chat_id, exc)
            self.refused = True
        except TelegramError as exc:  # a lost draft costs nothing: the final message follows
            log.info("a draft to chat %s failed: %s", self.chat_id, exc)

    async def close(self) -> None:
        """Stop sending drafts (the final message comes next)."""
        self._pending = None
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def _seconds(exc: RetryAfter) -> float:
    """``retry_after`` in seconds (an int or a timedelta, as PTB's versions give it)."""
    with warnings.catch_warnings():  # PTB warns that the type will become a timedelta
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        after = exc.retry_after
    return after.total_seconds() if isinstance(after, timedelta) else float(after)
