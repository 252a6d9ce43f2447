"""The terminal chat: the same agent and the same commands as Telegram, for a terminal.

Commands go through the shared :class:`~bot.telegram.desk.Desk`; without a reachable
Ollama every memory command still works and chat says plainly what to start. A proposal is
answered by /confirm or /discard, or by a bare yes / 好 / no typed right after it was shown
while it is the only one waiting (the same rule as Telegram).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TextIO

from agent.types import IncomingMessage, ProposalView
from bot.telegram.desk import Desk, outcome_text
from bot.telegram.ports import Answer, Backend
from bot.telegram.texts import detect_language, help_text, proposal_text

EXTRA_HELP = "  /quit — 離開 / leave"
Notify = Callable[[str, str], Awaitable[None]]
# Runs the scheduled jobs for as long as the chat lasts; gets the notifier for this user.
JobsFactory = Callable[[Notify], AbstractAsyncContextManager[object]]
# Runs for as long as the chat lasts and is awaited on the way out (the deferred-work worker).
Background = AbstractAsyncContextManager[object]


class TerminalChat:
    """A line-oriented chat loop over stdin/stdout for one user key (``cli_<name>``)."""

    def __init__(
        self,
        backend: Backend,
        user_key: str,
        out: TextIO | None = None,
        jobs: JobsFactory | None = None,
        background: Background | None = None,
    ) -> None:
        self.backend = backend
        self.jobs = jobs
        self.background = background
        self.desk = Desk(backend)
        self.user_key = user_key
        self.out = out
        self._counter = 0
        self._shown_last: str | None = None  # the proposal the last printed line showed

    def say(self, text: str) -> None:
        """Print one reply."""
        self._shown_last = None
        print(text, file=self.out or sys.stdout, flush=True)

    async def handle(self, line: str) -> bool:
        """Handle one input line; returns False when the user wants to leave."""
        line = line.strip()
        if not line:
            return True
        lang = detect_language(None, line)
        if line in ("/quit", "/exit"):
            return False
        if line.startswith("/"):
            name, _, arg = line[1:].partition(" ")
            answer = await self.desk.command(self.user_key, name.lower(), arg, lang)
            if name.lower() == "help":
                answer = Answer(help_text(lang) + "\n" + EXTRA_HELP)
            self.show(answer, lang)
            return True
        decision = self.backend.classify(line)
        if decision is not None:
            said = await self.desk.answer_word(self.user_key, decision, lang, self._shown_last)
            if said is not None:
                self.show(said, lang)
                return True
        self._counter += 1
        msg = IncomingMessage(
            user_key=self.user_key,
            text=line,
            time=datetime.now().astimezone(),
            message_id=f"cli-{int(datetime.now().timestamp())}-{self._counter}",
            language=lang,
        )
        reply = await self.backend.respond(msg)
        self.show(
            Answer(
                reply.text, proposals=reply.proposals, notices=reply.notices, error=reply.error
            ),
            lang,
        )
        return True

    def show(self, answer: Answer, lang: str) -> None:
        """Print an answer: text, document, notices, proposals with how to answer them."""
        if answer.text:
            self.say(answer.text)
        if answer.document is not None:
            self.say(answer.document.content)
        for notice in answer.notices:
            self.say(notice)
        for p in answer.proposals:
            self.say(self._proposal(p, lang))
            self._shown_last = p.proposal_id

    @staticmethod
    def _proposal(p: ProposalView, lang: str) -> str:
        how = (
            f"回覆「確認」或 /confirm {p.proposal_id}；/discard {p.proposal_id} 捨棄"
            if lang == "zh"
            else f"Type yes or /confirm {p.proposal_id}; /discard {p.proposal_id} to drop it"
        )
        return f"{proposal_text(p, lang)}\n{how}"

    async def run_async(self, stdin: TextIO) -> None:
        """Read lines until EOF or /quit."""
        self.say(f"PCAI terminal chat as {self.user_key}. /help for commands, Ctrl-D to leave.")
        if not self.backend.chat_available():
            from bot.telegram.backend import needs_ollama

            self.say(needs_ollama(getattr(self.backend, "chat_model", "<model>")))
        async with contextlib.AsyncExitStack() as stack:
            if self.background is not None:  # first what a previous chat left in the queue
                await stack.enter_async_context(self.background)
            if self.jobs is not None:
                await stack.enter_async_context(self.jobs(self._notify))
            loop = asyncio.get_running_loop()
            while True:
                line = await loop.run_in_executor(None, stdin.readline)
                if not line or not await self.handle(line):
                    break
        await self.backend.flush()

    async def _notify(self, user_key: str, text: str) -> None:
        # Scheduled jobs notify every user; a terminal shows only its own user's notices.
        if user_key == self.user_key:
            self.say(text)

    def run(self, stdin: TextIO | None = None) -> None:
        """Run the chat until EOF, /quit or Ctrl-C (reads ``sys.stdin`` by default)."""
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self.run_async(stdin or sys.stdin))
        self.say("Bye.")


__all__ = ["TerminalChat", "outcome_text"]
