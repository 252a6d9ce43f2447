"""Plain data crossing the bot/agent boundary: no Telegram types ever pass here."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """One user message as the agent sees it."""

    user_key: str  # telegram_<id> or cli_<name>
    text: str
    time: datetime  # timezone-aware
    message_id: str = ""  # the transport's id, used as the daily-log ref
    reply_to_id: str = ""  # the id of the bot message this replies to, if any
    language: str = ""  # "zh" / "en" hint from the transport ("" = detect from text)
    in_group: bool = False  # memories are never proposed from or shown in a group
    # A group's own conversation (``telegram_group_<chat id>``); private turns use user_key.
    group_session: str = ""


@dataclass(frozen=True, slots=True)
class ProposalView:
    """A pending memory the transport must show with Confirm / Edit / Discard."""

    proposal_id: str
    text: str
    section: str
    expires_at: datetime
    # "id: summary; ..." of the similar memories (the edge says "add or replace?" in the
    # reader's language); "" when there are none
    conflicts_shown: str = ""
    weight: int = 0  # the proposed user_weight, 0 when left at the default
    scope: str = ""  # the proposed scope, "" when global


@dataclass(frozen=True, slots=True)
class ReminderView:
    """A proposed reminder the transport shows with Confirm / Discard; it rings once confirmed."""

    reminder_id: int  # the row, inside (buttons' data)
    text: str
    understood_zh: str  # 我會在 2026-03-05（週四）09:00（Asia/Taipei）提醒你：打電話給媽媽
    understood_en: str
    number: int = 0  # the owner's own number: what the card shows and a typed command names


@dataclass(frozen=True, slots=True)
class InjectedMemory:
    """One memory that was put in the prompt (for /why and access counts)."""

    id: str
    layer: str  # "L0" | "L1" | "L2" | "short_term" | "fallback"
    score: float
    text: str
    source: str


@dataclass(frozen=True, slots=True)
class Reply:
    """The agent's answer to one message."""

    text: str
    proposals: tuple[ProposalView, ...] = ()
    injected: tuple[InjectedMemory, ...] = ()
    error: bool = False  # True when the text is a failure notice (e.g. Ollama down)
    notices: tuple[str, ...] = field(default=())  # extra one-line notices (expired proposals)
    reminders: tuple[ReminderView, ...] = ()  # reminders the model proposed this turn
    # (step, milliseconds) for each pipeline step, in order (logs and bench/pipeline.py).
    timings: tuple[tuple[str, float], ...] = field(default=())


class StepClock:
    """Times the steps of one turn (:attr:`Reply.timings`) and logs each at debug level."""

    def __init__(self, user_key: str) -> None:
        self.user_key = user_key
        self.steps: list[tuple[str, float]] = []

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            ms = (time.perf_counter() - start) * 1000
            self.steps.append((name, ms))
            log.debug("%s: step %s took %.1f ms", self.user_key, name, ms)
