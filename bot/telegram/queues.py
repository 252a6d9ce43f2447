"""One queue per user for Telegram updates: fair, bounded, nothing lost, a prompt stop.

- **Fair.** Each user's updates run one at a time, in order, on that user's own queue; users
  are served side by side. An update waits only behind its own sender's (never in a shared
  pool a flood could fill), so another user's turn never waits behind a flood.
- **A flood is bounded per user.** Past :data:`FLOOD_LIMIT` waiting updates, a further plain
  private text message is merged into the last waiting one (one turn answers them together,
  up to :data:`MERGE_MAX_CHARS`); anything else (commands, stickers, group messages, text past
  that size) is not run, and the user is told so once, in one sentence, per flood.
- **No lost turn.** Every new message is written to ``open_turns`` (pcai.db) before it is
  queued and deleted once handled, with secrets masked first (:mod:`bot.telegram.open_turns`).
  :meth:`UserQueues.replay` runs at start: what the last process left is answered now, or,
  when older than :data:`STALE_SECONDS`, its sender gets one sentence that it was not answered.
  An update id is handled at most once per process (a replay and Telegram's redelivery of the
  same update meet here).
- **A prompt stop.** :meth:`UserQueues.stop` drops what waits (it stays open for the next
  process) and gives running turns :data:`STOP_GRACE` seconds before cutting them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from telegram import Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import Application, BaseUpdateProcessor

from bot.frontdesk.texts import detect_language, say
from bot.telegram.access import addressed_to_bot
from bot.telegram.context import DEPS
from bot.telegram.open_turns import OpenTurn, OpenTurns
from bot.telegram.presses import answer_once
from memory.base.guards import REDACTED, mask

log = logging.getLogger(__name__)

FLOOD_LIMIT = 5  # a user's updates waiting beyond this are merged (plain text) or refused
STOP_GRACE = 2.0  # seconds a running turn may still finish after SIGTERM; then it is cut
STALE_SECONDS = 300.0  # an unanswered message older than this is told about, not answered
SEEN_MAX = 10_000  # update ids remembered to handle each once (a replay vs a redelivery)
MERGE_SEPARATOR = "\n\n"
MERGE_MAX_CHARS = 4096  # a merged turn is never longer than one Telegram message can be
QUOTE_CHARS = 40


@dataclass(slots=True)
class _Turn:
    """One update waiting on its user's queue (``merged``: later messages folded into it)."""

    update: Update
    coroutine: Awaitable[Any] | None  # None: run through the Application (a merge target)
    merged: list[Update] = field(default_factory=list)
    written: list[asyncio.Future[None]] = field(default_factory=list)  # its open_turns rows


@dataclass(slots=True)
class _UserQueue:
    waiting: deque[_Turn] = field(default_factory=deque)
    runner: asyncio.Task[None] | None = None
    told_flood: bool = False  # the one flood sentence went out (reset once the queue drains)


class UserQueues(BaseUpdateProcessor):
    """The Application's update processor: a queue per user (module docstring)."""

    def __init__(
        self,
        turns: OpenTurns | None = None,
        *,
        flood_limit: int = FLOOD_LIMIT,
        grace: float = STOP_GRACE,
        allowed: frozenset[int] = frozenset(),
        groups: bool = False,
    ) -> None:
        # No shared cap: each user is bounded on their own queue, so PTB's semaphore never binds.
        super().__init__(max_concurrent_updates=1_000_000)
        self.turns = turns
        self.allowed, self.groups = allowed, groups  # whose messages are written (see _kept)
        self.flood_limit = flood_limit
        self.grace = grace
        self.app: Application[Any, Any, Any, Any, Any, Any] | None = None  # set by attach()
        self._queues: dict[int, _UserQueue] = {}
        self._seen: set[int] = set()
        self._seen_order: deque[int] = deque()
        self._stopping = False

    def attach(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """The Application whose updates these are (merged turns and sentences go through it)."""
        self.app = app

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Queue ``update`` on its sender's queue and return (its turn runs there)."""
        key = _sender_id(update)
        if not isinstance(update, Update) or key is None:
            await coroutine
            return
        if self._stopping or not self._first_time(update.update_id):
            _close(coroutine)  # stopping: it stays open in pcai.db for the next process
            return
        # Queued at once, in arrival order (no await before this); written to pcai.db beside,
        # and its turn waits for that write before it runs.
        queue = self._queues.setdefault(key, _UserQueue())
        turn: _Turn | None = None
        if len(queue.waiting) < self.flood_limit:
            turn = _Turn(update, coroutine)
            queue.waiting.append(turn)
        else:
            _close(coroutine)
            turn = self._overflow(queue, update)
        if turn is None:
            await self._skip(queue, update)
            return
        turn.written.append(asyncio.ensure_future(self._open(update)))
        if queue.runner is None:
            queue.runner = asyncio.create_task(self._drain(key, queue), name=f"pcai-user-{key}")

    def _overflow(self, queue: _UserQueue, update: Update) -> _Turn | None:
        """A flood: the waiting turn a plain message is merged into, or None (skipped)."""
        last = queue.waiting[-1]
        if _mergeable(update) and _mergeable(last.update) and _room(last, update):
            last.merged.append(update)
            return last
        if _mergeable(update) and len(queue.waiting) == self.flood_limit:
            turn = _Turn(update, None)  # the one later messages merge into
            queue.waiting.append(turn)
            return turn
        return None

    async def _skip(self, queue: _UserQueue, update: Update) -> None:
        """Past the bound: not run, and the user is told once per flood (each press gets
        its one answer, so no button keeps spinning)."""
        log.info("update %s not run: its sender's queue is full", update.update_id)
        if update.callback_query is not None and self.app is not None:
            await self._answer_skipped(update)
            return
        if not queue.told_flood:
            queue.told_flood = True
            await self._tell(update, "flood_skipped")

    async def _answer_skipped(self, update: Update) -> None:
        query, user = update.callback_query, update.effective_user
        if self.app is None or query is None:
            return
        deps = self.app.bot_data.get(DEPS)
        if deps is not None and user is not None:
            lang = deps.lang(update)
        else:
            lang = detect_language(user.language_code if user else None, "")
        await answer_once(query, self.app.bot_data, say("press_skipped", lang))

    async def _drain(self, key: int, queue: _UserQueue) -> None:
        """Run the user's turns in order until none waits."""
        try:
            while queue.waiting and not self._stopping:
                turn = queue.waiting[0]
                await asyncio.gather(*turn.written)  # kept in pcai.db before it runs
                await self._run(turn)
                queue.waiting.popleft()
                await self._close_rows([turn.update, *turn.merged])
        finally:
            queue.runner = None
            if not queue.waiting:
                self._queues.pop(key, None)  # strangers must not grow this map forever

    async def _run(self, turn: _Turn) -> None:
        try:
            if turn.coroutine is not None and not turn.merged:
                await turn.coroutine
                return
            _close(turn.coroutine)
            if self.app is None:
                raise RuntimeError("UserQueues.attach(app) must come before merged turns")
            await self.app.process_update(merged_update(turn.update, turn.merged, self.app.bot))
        except Exception:  # PTB routes handler errors itself; this is a bug of ours
            log.exception("update %s failed outside its handlers", turn.update.update_id)

    def _first_time(self, update_id: int) -> bool:
        if update_id in self._seen:
            log.info("update %s was handled already (a replay, then Telegram's copy)", update_id)
            return False
        self._seen.add(update_id)
        self._seen_order.append(update_id)
        if len(self._seen_order) > SEEN_MAX:
            self._seen.discard(self._seen_order.popleft())
        return True

    async def _open(self, update: Update) -> None:
        """Write a new message to ``open_turns`` before it runs (not a button: it is answered
        by Telegram's own retry of the press, and its query expires)."""
        message, user = update.message, update.effective_user
        if self.turns is None or message is None or user is None or not self._kept(update):
            return
        try:
            await asyncio.to_thread(
                self.turns.opened,
                update.update_id,
                f"telegram_{user.id}",
                message.chat.id,
                message.date.timestamp(),
                masked_payload(update),
            )
        except Exception:  # a full disk must not stop the answer: it only loses the crash cover
            log.exception("could not record update %s as open", update.update_id)

    def _kept(self, update: Update) -> bool:
        """Only what the bot will answer is written: an allowed user's private message, or one
        addressed to the bot in a group (strangers and group chatter leave no trace)."""
        message, user = update.message, update.effective_user
        if message is None or user is None or user.id not in self.allowed:
            return False
        if message.chat.type == ChatType.PRIVATE:
            return True
        if self.app is None or not self.groups:
            return False
        bot = self.app.bot
        return addressed_to_bot(message, bot.id, bot.username or "")

    async def _close_rows(self, updates: list[Update]) -> None:
        if self.turns is None:
            return
        try:
            await asyncio.to_thread(self.turns.closed, [u.update_id for u in updates])
        except Exception:
            log.exception("could not close the open turns %s", [u.update_id for u in updates])

    async def _tell(self, update: Update, key: str, **fields: object) -> None:
        chat, user = update.effective_chat, update.effective_user
        if self.app is None or chat is None:
            return
        text = (update.message.text if update.message else "") or ""
        deps = self.app.bot_data.get(DEPS)  # the person's one language, when the bot is wired
        if deps is not None and user is not None:
            lang = deps.lang(update, text)
        else:
            lang = detect_language(user.language_code if user else None, text)
        try:
            await self.app.bot.send_message(chat.id, say(key, lang, **fields))
        except TelegramError:
            log.warning("could not tell chat %s (%s)", chat.id, key, exc_info=True)

    async def replay(self, now: float | None = None) -> int:
        """Handle what the last process received and never finished; returns how many.

        A message younger than :data:`STALE_SECONDS` is answered now (through the update
        queue, in order); an older one gets one sentence that it was not answered.
        """
        if self.turns is None or self.app is None:
            return 0
        try:
            left = await asyncio.to_thread(self.turns.left)
        except Exception:  # healing must never be the reason the bot cannot start
            log.exception("could not read the turns the last process left open")
            return 0
        now = time.time() if now is None else now
        for turn in left:
            try:
                if now - turn.sent_ts <= STALE_SECONDS:
                    await self.app.update_queue.put(turn.update(self.app.bot))
                else:
                    await self._tell_lost(turn)
            except Exception:  # a row this version cannot read: dropped, said in the log
                log.exception("open turn %s cannot be handled; dropped", turn.update_id)
                await asyncio.to_thread(self.turns.closed, [turn.update_id])
        if left:
            log.info("%d message(s) left unanswered by the last process were handled", len(left))
        return len(left)

    async def _tell_lost(self, turn: OpenTurn) -> None:
        update = turn.update(self.app.bot if self.app else None)
        text = update.message.text or "" if update.message else ""
        quoted = text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"
        sent = datetime.fromtimestamp(turn.sent_ts).astimezone().strftime("%H:%M")
        await self._tell(update, "turn_lost", time=sent, text=quoted)
        await self._close_rows([update])

    async def stop(self, grace: float | None = None) -> None:
        """Run nothing new; drop what waits; cut running turns after ``grace`` seconds.

        What was dropped or cut stays open in pcai.db: the next process answers it.
        """
        self._stopping = True
        runners = []
        for queue in self._queues.values():
            while len(queue.waiting) > 1:
                _close(queue.waiting.pop().coroutine)
            if queue.runner is not None:
                runners.append(queue.runner)
        if not runners:
            return
        _, late = await asyncio.wait(runners, timeout=self.grace if grace is None else grace)
        for task in late:
            task.cancel()
        if late:
            log.warning(
                "%d turn(s) cut by the stop; they are answered after the restart", len(late)
            )
            await asyncio.wait(late, timeout=1.0)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Stop (a stop not started by a signal: no grace)."""
        await self.stop(grace=0.0)


def _sender_id(update: object) -> int | None:
    if isinstance(update, Update):
        if update.effective_user:
            return update.effective_user.id
        if update.effective_chat:
            return update.effective_chat.id
    return None


def _mergeable(update: Update) -> bool:
    """A plain private text message (no command, no reply): safe to answer with its neighbours."""
    message = update.message
    return (
        message is not None
        and message.chat.type == ChatType.PRIVATE
        and bool(message.text)
        and not (message.text or "").startswith("/")
        and message.reply_to_message is None
    )


def _room(turn: _Turn, update: Update) -> bool:
    """Whether ``update``'s text still fits in ``turn``'s merged text (a bounded turn)."""
    texts = [u.message.text or "" for u in (turn.update, *turn.merged, update) if u.message]
    return sum(map(len, texts)) <= MERGE_MAX_CHARS


def merged_update(first: Update, later: list[Update], bot: Any) -> Update:
    """``first`` with the texts of ``later`` appended: one turn answers the flood."""
    data = first.to_dict()
    texts = [u.message.text or "" for u in (first, *later) if u.message is not None]
    data["message"]["text"] = MERGE_SEPARATOR.join(texts)
    data["message"].pop("entities", None)
    return Update.de_json(data, bot)


def masked_payload(update: Update) -> dict[str, Any]:
    """The update as JSON with every secret in its text masked (it is written to disk).

    A text the masker fails on (a bug of ours, logged) is kept as ``[REDACTED]`` whole: the
    message keeps its record, and nothing unmasked reaches the disk.
    """
    data = update.to_dict()
    message = data.get("message") or {}
    for name in ("text", "caption"):
        if isinstance(message.get(name), str):
            try:
                message[name] = mask(message[name])
            except Exception:
                log.exception("could not mask the %s of update %s", name, update.update_id)
                message[name] = REDACTED
    return data


def _close(coroutine: Awaitable[Any] | None) -> None:
    """Drop a handler coroutine that will never run (no "never awaited" warning)."""
    if isinstance(coroutine, Coroutine):
        coroutine.close()
