"""The terminal chat: the same agent and the same commands as Telegram, for a terminal.

Commands go through the shared :class:`~bot.frontdesk.desk.Desk`; without a reachable
model server (the one the settings name) every memory command still works and chat says
plainly which server at which address to start. A proposal is
answered by /confirm or /discard, or by a bare yes / 好 / no typed right after it was shown
while it is the only one waiting (the same rule as Telegram). Reminders go through the shared
:class:`~agent.reminders.desk.ReminderDesk`: each button is shown with the command that
does the same, and a reminder that comes due is printed between the user's lines (this
terminal schedules its own user's reminders only).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import date, datetime
from typing import TextIO

from agent.reminders.desk import Card, ReminderDesk
from agent.reminders.scheduler import APSchedulerAdapter, NoScheduler
from agent.reminders.types import Reminder
from agent.types import IncomingMessage, ProposalView, Reply
from bot.frontdesk.desk import Desk, outcome_text
from bot.frontdesk.ports import Answer, Backend
from bot.frontdesk.shown import Shown
from bot.frontdesk.steps import FrontDesk, Line, run_line
from bot.frontdesk.texts import help_text, proposal_text, say

log = logging.getLogger(__name__)
Notify = Callable[[str, str], Awaitable[None]]
# Runs the scheduled jobs for as long as the chat lasts; gets the notifier for this user.
JobsFactory = Callable[[Notify], AbstractAsyncContextManager[object]]
# Runs for as long as the chat lasts and is awaited on the way out (the deferred-work worker).
Background = AbstractAsyncContextManager[object]
PROMPT = "> "  # shown before each line the person types, when they type at a terminal


class StreamPrinter:
    """Prints the reply as it is written (what :mod:`agent.streaming` lets through)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.printed = ""

    async def __call__(self, text: str) -> None:
        """The reply so far; "" when a tool round took it back (a new line follows)."""
        if text.startswith(self.printed):
            self.out.write(text[len(self.printed) :])
        else:
            self.out.write("\n")  # printed text cannot be taken back: the final comes whole
        self.out.flush()
        self.printed = text

    def finish(self, final: str) -> str:
        """End the printed line; what of ``final`` is left to print ("" when all is out)."""
        if not self.printed:
            return final
        if final.startswith(self.printed):
            print(final[len(self.printed) :], file=self.out, flush=True)
            return ""
        print(file=self.out, flush=True)
        return final


class TerminalChat:
    """A line-oriented chat loop over stdin/stdout for one user key (``cli_<name>``)."""

    def __init__(
        self,
        backend: Backend,
        user_key: str,
        out: TextIO | None = None,
        jobs: JobsFactory | None = None,
        reminders: ReminderDesk | None = None,
        background: Background | None = None,
    ) -> None:
        self.backend = backend
        self.jobs = jobs
        self.reminders = reminders or getattr(backend, "reminders", None)
        self._rang = 0
        self.background = background
        self.desk = Desk(backend, typed=True)
        self.user_key = user_key
        self.out = out
        self._counter = 0
        self._replying: asyncio.Task[Reply] | None = None  # the reply being written
        self._cut = False  # Ctrl-C stopped it
        self._leave = asyncio.Event()  # Ctrl-C at the prompt
        self.shown = Shown()  # what the last printed line showed: a bare word may answer it
        # The terminal classifies any line (Telegram only short ones) and routes "/" lines here.
        self.front = FrontDesk(
            backend, self.desk, self.reminders, self.shown, short_only=False, typed_commands=True
        )

    def say(self, text: str) -> None:
        """Print one reply."""
        self.shown.spoke(self.user_key)
        print(text, file=self.out or sys.stdout, flush=True)

    async def handle(self, line: str) -> bool:
        """Handle one input line; returns False when the user wants to leave."""
        line = line.strip()
        if not line:
            return True
        lang = self.backend.languages.of(self.user_key, None, line)
        if line in ("/quit", "/exit"):
            return False
        await run_line(self.front, Line(self.user_key, line, lang), _TerminalOut(self))
        return True

    async def _handled(self, line: str) -> bool:
        """:meth:`handle`, and a line it fails on (a bug of ours) is one sentence, not the end
        of the chat: a warning line names the error, ``PCAI_LOG_LEVEL=DEBUG`` shows where."""
        try:
            return await self.handle(line)
        except Exception as exc:
            log.warning("a line of the terminal chat failed (%s)", type(exc).__name__)
            log.debug("the line failed here", exc_info=True)
            self.say(say("failed", self.backend.languages.of(self.user_key)))
            return True

    def show_card(self, card: Card) -> None:
        """Print a reminder card: its text, each button with the command that does the same."""
        lines = [card.text]
        for row in card.buttons:
            lines.append("  " + " · ".join(f"[{b.label}] {b.command}" for b in row))
        if card.answers:
            lines.append("  " + say("chat_yes_no", self.backend.languages.of(self.user_key)))
        self.say("\n".join(lines))
        if card.answers:
            self.shown.note(self.user_key, card.answers)

    async def chat(self, line: Line) -> None:
        """Ask the agent; the reply is printed as it is written."""
        self._counter += 1
        msg = IncomingMessage(
            user_key=self.user_key,
            text=line.text,
            time=datetime.now().astimezone(),
            # Unique across restarts and two chats of one user: the log keeps one record per id.
            message_id=f"cli-{time.time_ns()}-{self._counter}",
            language=line.lang,
        )
        printer = StreamPrinter(self.out or sys.stdout)
        self._replying = turn = asyncio.ensure_future(self.backend.respond(msg, printer))
        try:
            reply = await turn
        except asyncio.CancelledError:
            if not (self._cut and turn.cancelled()):
                raise  # the chat itself is closing
            # Ctrl-C: the reply stops where it is (the agent kept that much, marked as cut).
            self._cut = False
            if printer.printed:
                print(file=self.out or sys.stdout)
            self.say(say("reply_cut", line.lang) + "\n" + say("chat_cut_hint", line.lang))
            return
        finally:
            self._replying = None
        self.shown.spoke(self.user_key)
        rest = printer.finish(reply.text)  # the part of the reply not printed yet
        self.show(
            Answer(rest, proposals=reply.proposals, notices=reply.notices, error=reply.error),
            line.lang,
        )
        if self.reminders is not None:
            for view in reply.reminders:
                self.show_card(self.reminders.proposal_card(view, line.lang))

    def show_offers(self, lang: str) -> None:
        if self.reminders is not None:
            for card in self.reminders.take_offers(self.user_key, lang):
                self.show_card(card)

    def show(self, answer: Answer, lang: str) -> None:
        """Print an answer: text, document, notices, proposals with how to answer them."""
        if answer.text:
            self.say(answer.text)
        if answer.buttons:  # no buttons here: what /memory's 📌 / ✏️ / 🗑 do, as commands
            self.say(say("chat_buttons", lang))
        if answer.document is not None:
            self.say(answer.document.content)
        for notice in answer.notices:
            self.say(notice)
        for p in answer.proposals:
            self.say(self._proposal(p, lang))
            self.shown.note(self.user_key, p.proposal_id)
        if self.reminders is not None:
            for view in answer.reminders:
                self.show_card(self.reminders.proposal_card(view, lang))

    @staticmethod
    def _proposal(p: ProposalView, lang: str) -> str:
        if p.conflicts_shown:  # add or replace: the card says how, with the words to type
            return proposal_text(p, lang, typed=True)
        how = say("chat_how_to_answer", lang, id=p.proposal_id)
        return f"{proposal_text(p, lang)}\n{how}"

    async def run_async(self, stdin: TextIO) -> None:
        """Read lines until EOF or /quit."""
        lang = self.backend.languages.of(self.user_key)  # what they chose or last wrote
        self.say(say("chat_banner", lang, user=self.user_key))
        if not self.backend.chat_available():  # said once; a message then asks again
            self.say(self.backend.model_down(lang))
        async with contextlib.AsyncExitStack() as stack:
            if self.background is not None:  # first what a previous chat left in the queue
                await stack.enter_async_context(self.background)
            if self.jobs is not None:
                await stack.enter_async_context(self.jobs(self._notify))
            await stack.enter_async_context(self._ringing())
            stack.enter_context(self._ctrl_c())
            lines = _lines(stdin)
            prompt = PROMPT if _typed_at_terminal(stdin) else ""
            while True:
                if prompt:
                    print(prompt, end="", file=self.out or sys.stdout, flush=True)
                line = await self._next(lines)
                if not line or not await self._handled(line):
                    break
        await self.backend.flush()

    async def _next(self, lines: asyncio.Queue[str]) -> str:
        """The next typed line; "" at the end of input or on Ctrl-C at the prompt."""
        if self._leave.is_set():
            return ""
        typed = asyncio.ensure_future(lines.get())
        leave = asyncio.ensure_future(self._leave.wait())
        done, _ = await asyncio.wait((typed, leave), return_when=asyncio.FIRST_COMPLETED)
        leave.cancel()
        if typed in done:
            return typed.result()
        typed.cancel()
        print(file=self.out or sys.stdout)  # the prompt's line ends before the goodbye
        return ""

    def interrupt(self) -> None:
        """Ctrl-C: stop the reply being written, else (at the prompt) leave."""
        if self._replying is not None and not self._replying.done():
            self._cut = True
            self._replying.cancel()
        else:
            self._leave.set()

    @contextlib.contextmanager
    def _ctrl_c(self) -> Iterator[None]:
        """Ctrl-C goes to :meth:`interrupt` while the chat runs (the main thread's loop only:
        elsewhere, as in a test's thread, the default stays)."""
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self.interrupt)
        except (RuntimeError, ValueError, NotImplementedError):
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    @contextlib.asynccontextmanager
    async def _ringing(self) -> AsyncIterator[None]:
        """Schedule this user's reminders and briefing on an APScheduler for the chat's life."""
        if self.reminders is None:
            yield
            return
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        service = self.reminders.service
        owns = service.owns
        scheduler = AsyncIOScheduler(event_loop=asyncio.get_running_loop())
        service.scheduler = APSchedulerAdapter(scheduler, service.on_due)
        service.owns = lambda user_key: user_key == self.user_key
        service.sender, service.on_briefing = self._ring, self._brief
        scheduler.start()
        try:
            await asyncio.to_thread(service.start)
            yield
        finally:
            scheduler.shutdown(wait=False)
            service.scheduler, service.sender, service.on_briefing = NoScheduler(), None, None
            service.owns = owns

    async def _ring(self, reminder: Reminder, text: str) -> str:
        """A reminder came due: print it (with its Done / Snooze commands) between the lines."""
        assert self.reminders is not None
        self.show_card(self.reminders.alert_card(reminder, text))
        self._rang += 1
        return f"cli-alert-{self._rang}"

    async def _brief(self, user_key: str, day: date) -> None:
        if self.reminders is not None and self.reminders.writer is not None:
            self.say(await self.reminders.writer.write(user_key, day))

    async def _notify(self, user_key: str, text: str) -> None:
        # Scheduled jobs notify every user; a terminal shows only its own user's notices.
        if user_key == self.user_key:
            self.say(text)

    def run(self, stdin: TextIO | None = None) -> None:
        """Run the chat until EOF, /quit or Ctrl-C (reads ``sys.stdin`` by default)."""
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self.run_async(stdin or sys.stdin))
        self.say(say("chat_bye", self.backend.languages.of(self.user_key)))


def _typed_at_terminal(stdin: TextIO) -> bool:
    """Whether a person types the lines (a prompt helps) rather than a pipe or a file."""
    try:
        return stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _lines(stdin: TextIO) -> asyncio.Queue[str]:
    """The lines of ``stdin`` as they are typed ("" at its end), read by a daemon thread: a
    read that waits at the prompt never keeps the process from leaving (Ctrl-C)."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str] = asyncio.Queue()

    def read() -> None:
        while True:
            try:
                line = stdin.readline()
            except Exception:  # a closed or broken input ends it, as its end does
                line = ""
            try:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            except RuntimeError:  # the chat ended meanwhile
                return
            if not line:
                return

    threading.Thread(target=read, name="pcai-stdin", daemon=True).start()
    return lines


@dataclass(slots=True)
class _TerminalOut:
    """The front desk's transport for the terminal: printed lines, commands for buttons."""

    term: TerminalChat

    async def say(self, text: str, *, quote: bool = False) -> None:
        """Print a line (there are no replies to quote here)."""
        self.term.say(text)

    async def restate(self, message_id: str, text: str) -> None:
        """Nothing: a printed line cannot change (and the terminal has no replies)."""

    async def card(self, card: Card) -> None:
        """A reminder card with its buttons as commands."""
        self.term.show_card(card)

    async def proposals(self, proposals: tuple[ProposalView, ...], lang: str) -> None:
        """Proposals with how to answer them."""
        self.term.show(Answer("", proposals=proposals), lang)

    async def answer(self, answer: Answer, lang: str) -> None:
        """An answer, then any reminder offer a confirmed memory raised."""
        self.term.show(answer, lang)
        self.term.show_offers(lang)

    def help(self, lang: str) -> str:
        """/help, and how to leave."""
        return help_text(lang) + "\n" + say("chat_quit", lang)

    async def chat(self, line: Line) -> None:
        """Ask the agent."""
        await self.term.chat(line)


__all__ = ["TerminalChat", "outcome_text"]
