"""The front desk: one ordered list of (check, handle) steps that routes a typed line.

Telegram (bot/telegram/messages.py) and the terminal (bot/chat.py) both build a :class:`Line`
and call :func:`run_line`; they differ only in their :class:`Transport` (how a text, a card or
a proposal is sent, and how a chat turn is streamed). The order is the one Telegram always
had: a reminder answer, then a proposal answer (a revise prompt, an edit prompt, a reply to a
proposal, a bare word), then a command, then chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from agent.reminders.desk import REMINDER_COMMANDS, Card, ReminderDesk
from agent.types import ProposalView
from bot.frontdesk.desk import Desk, outcome_text
from bot.frontdesk.ports import Answer, Backend, BackendError, Decision, Via
from bot.frontdesk.shown import Shown

SHORT_REPLY = 12  # a bare confirm word ("確認", "yes") is short; longer text goes to the agent


@dataclass(frozen=True, slots=True)
class Line:
    """One typed line, free of its transport."""

    user_key: str
    text: str  # stripped
    lang: str
    in_group: bool = False
    # The id of the bot's message this line replies to (Telegram only); None: not a reply.
    reply_to: str | None = None


class Transport(Protocol):
    """How one front end shows what the steps decided (the only part that differs)."""

    async def say(self, text: str, *, quote: bool = False) -> None:
        """Send one text; ``quote``: as a reply to the user's line (where replies exist)."""
        ...

    async def restate(self, message_id: str, text: str) -> None:
        """The bot's message ``message_id`` (the one replied to) now says ``text``."""
        ...

    async def card(self, card: Card) -> None:
        """Send a reminder card (a proposal or offer card becomes what a bare word answers)."""
        ...

    async def proposals(self, proposals: tuple[ProposalView, ...], lang: str) -> None:
        """Send proposals, each as what a bare word (or a reply) answers."""
        ...

    async def answer(self, answer: Answer, lang: str) -> None:
        """Send a command's or a bare word's answer."""
        ...

    def help(self, lang: str) -> str:
        """/help's text on this front end."""
        ...

    async def chat(self, line: Line) -> None:
        """Ask the agent and send its reply (streamed as this front end can)."""
        ...


@dataclass(slots=True)
class FrontDesk:
    """What the steps use: the backend, the desks, the shared "last shown" state, the rules."""

    backend: Backend
    desk: Desk
    reminders: ReminderDesk | None
    shown: Shown
    # Telegram answers only short words (SHORT_REPLY); the terminal classifies any line.
    short_only: bool = True
    # The terminal routes "/" lines here; Telegram's CommandHandlers take them before on_text.
    typed_commands: bool = False

    def decision(self, text: str) -> Decision | None:
        """A confirm / replace / reject word, when the line is one."""
        if self.short_only and len(text) > SHORT_REPLY:
            return None
        return self.backend.classify(text)


Check = Callable[[FrontDesk, Line], bool]
# A handle returns False when the line turned out not to be its kind: the next step takes it.
Handle = Callable[[FrontDesk, Line, Transport], Awaitable[bool]]
Step = tuple[Check, Handle]


def _private_answer(front: FrontDesk, line: Line) -> bool:
    return not line.in_group and not (front.typed_commands and line.text.startswith("/"))


async def reminder_answer(front: FrontDesk, line: Line, out: Transport) -> bool:
    """A yes / no replying to a reminder proposal or offer, or typed right after it."""
    desk, key = front.reminders, line.user_key
    if desk is None:
        return False
    decision = front.decision(line.text)
    if decision is None:
        return False
    via: Literal["reply", "word"] = "reply" if line.reply_to is not None else "word"
    if line.reply_to is not None:
        answers = desk.tied(key, line.reply_to)
    else:  # a bare word answers only the proposal or offer the bot's last message showed
        shown = front.shown.get(key) or ""
        answers = shown if shown.startswith(("r:", "b:")) else None
    if answers is None:
        return False
    pressed = await desk.answer(key, answers, decision != "reject", line.lang, via)
    if pressed is None:
        return False  # no longer waiting: the memory flow (or chat) takes the message
    front.shown.spoke(key)
    if line.reply_to is not None and pressed.text:
        await out.restate(line.reply_to, pressed.text)
    await out.say(pressed.text or pressed.toast)
    for card in pressed.cards:  # "which one?": the proposals again
        await out.card(card)
    return True


async def proposal_answer(front: FrontDesk, line: Line, out: Transport) -> bool:
    """A memory's new text after ✏️, a proposal's new text, or a yes / no answering one."""
    backend, key, text, lang = front.backend, line.user_key, line.text, line.lang
    # Whatever this line turns out to be, the bot's next message answers it.
    shown_last = front.shown.pop(key)
    revising = front.shown.take_revising(key)
    if revising is not None:
        # The message after ✏️ under /memory is that memory's new text.
        try:
            said = await front.desk.revise(key, revising, text, lang, via="reply")
        except BackendError as exc:  # refused (a secret, noise, archived): say why
            said = exc.said(lang)
        await out.say(said)
        return True
    editing = front.shown.take_editing(key)
    if editing is not None and editing in await _live(backend, key):
        await _edit(front, line, out, editing, "edit")
        return True
    decision = front.decision(text)
    if line.reply_to is not None:
        found = await asyncio.to_thread(backend.proposal_for_message, key, line.reply_to)
        if found is not None and decision is not None:
            outcome = await asyncio.to_thread(backend.decide, key, found, decision, via="reply")
            result = outcome_text(outcome, lang)
            await out.restate(line.reply_to, result)
            await out.say(result, quote=True)
            return True
        # Any other reply to a waiting proposal is its new text.
        if found is not None and found in await _live(backend, key):
            await _edit(front, line, out, found, "reply")
            return True
    if decision is None:
        return False
    answer = await front.desk.answer_word(key, decision, lang, shown_last)
    if answer is None:
        return False  # nothing waits: "ok" is ordinary chat
    await out.answer(answer, lang)
    return True


async def _live(backend: Backend, key: str) -> set[str]:
    """The ids of the proposals still waiting (asked only when an edit needs it)."""
    return {p.proposal_id for p in await asyncio.to_thread(backend.pending, key)}


async def _edit(front: FrontDesk, line: Line, out: Transport, pid: str, via: Via) -> None:
    """The user's new text for proposal ``pid``: show it again, or say why not."""
    try:
        outcome = await asyncio.to_thread(
            front.backend.edit, line.user_key, pid, line.text, via=via
        )
    except BackendError as exc:  # the new text is refused (a secret, noise, a duplicate)
        await out.say(exc.said(line.lang))
        return
    if outcome.status == "edited" and outcome.proposal is not None:
        await out.proposals((outcome.proposal,), line.lang)
    else:
        await out.say(outcome_text(outcome, line.lang))


async def command(front: FrontDesk, line: Line, out: Transport) -> bool:
    """A typed /command: a reminder command, else the shared desk's."""
    name, _, arg = line.text[1:].partition(" ")
    name = name.lower()
    if front.reminders is not None and name in REMINDER_COMMANDS:
        for card in await front.reminders.command(line.user_key, name, arg, line.lang):
            await out.card(card)
        return True
    answer = await front.desk.command(line.user_key, name, arg, line.lang)
    if name == "help":
        answer = Answer(out.help(line.lang))
    await out.answer(answer, line.lang)
    return True


async def chat(front: FrontDesk, line: Line, out: Transport) -> bool:
    """Anything else: the agent answers."""
    await out.chat(line)
    return True


STEPS: tuple[Step, ...] = (
    (_private_answer, reminder_answer),
    (_private_answer, proposal_answer),
    (lambda front, line: front.typed_commands and line.text.startswith("/"), command),
    (lambda front, line: True, chat),
)


async def run_line(front: FrontDesk, line: Line, out: Transport) -> None:
    """Route one typed line through :data:`STEPS`: the first step that takes it handles it."""
    for check, handle in STEPS:
        if check(front, line) and await handle(front, line, out):
            return
