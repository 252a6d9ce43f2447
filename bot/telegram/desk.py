"""The commands both front ends share, as plain text in and :class:`Answer` out.

Telegram handlers and the terminal chat call the same :class:`Desk`, so /memory, /confirm
and the rest behave alike everywhere. No Telegram import here.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from agent.memory_view import file_problem_notice
from bot.telegram.ports import Answer, Backend, BackendError, Decision, Document, Outcome
from bot.telegram.texts import help_text, proposal_text, say
from memory.errors import UnreadableFileError

PAGE_SIZE = 10


class Desk:
    """Runs one command for one user and says what happened."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    async def command(self, user_key: str, name: str, arg: str, lang: str) -> Answer:
        """Run ``/name arg``; unknown commands get the help."""
        handler = getattr(self, f"cmd_{name}", None)
        if handler is None:
            return Answer(help_text(lang))
        try:
            answer: Answer = await handler(user_key, arg.strip(), lang)
        except BackendError as exc:
            return Answer(str(exc), error=True)
        except UnreadableFileError as exc:  # the user's own file: say which and what to fix
            return Answer(file_problem_notice(exc, exc.path.name), error=True)
        return answer

    async def cmd_start(self, user_key: str, arg: str, lang: str) -> Answer:
        """Greeting."""
        return Answer(say("welcome", lang))

    async def cmd_help(self, user_key: str, arg: str, lang: str) -> Answer:
        """The bilingual command list."""
        return Answer(help_text(lang))

    async def cmd_memory(self, user_key: str, arg: str, lang: str) -> Answer:
        """A page of the user's memories with their ids."""
        lines = await asyncio.to_thread(self.backend.memories, user_key)
        if not lines:
            return Answer(say("no_memories", lang))
        pages = (len(lines) + PAGE_SIZE - 1) // PAGE_SIZE
        page = min(max(int(arg) if arg.isdigit() else 1, 1), pages)
        shown = lines[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        out = [f"{m.id}  [{m.section}] {m.text}" for m in shown]
        if pages > 1:
            nxt = page + 1 if page < pages else 1
            out.append(say("page", lang, page=page, pages=pages, next=nxt))
        return Answer("\n".join(out))

    async def cmd_search(self, user_key: str, arg: str, lang: str) -> Answer:
        """Search the user's memories."""
        if not arg:
            return Answer(say("usage_search", lang))
        hits = await asyncio.to_thread(self.backend.search, user_key, arg)
        if not hits:
            return Answer(say("nothing_found", lang))
        lines = [f"{i}. [{h.score:.2f}] {h.text}  ({h.source})" for i, h in enumerate(hits, 1)]
        return Answer("\n".join(lines))

    async def cmd_remember(self, user_key: str, arg: str, lang: str) -> Answer:
        """Propose a memory; it is written only once confirmed."""
        if not arg:
            return Answer(say("usage_remember", lang))
        now = datetime.now().astimezone()
        proposal = await asyncio.to_thread(self.backend.propose, user_key, arg, now)
        return Answer("", proposals=(proposal,))

    async def cmd_forget(self, user_key: str, arg: str, lang: str) -> Answer:
        """Forget one memory by id."""
        if not arg:
            return Answer(say("usage_forget", lang))
        return Answer(await self.backend.forget(user_key, arg.split()[0]))

    async def cmd_undo(self, user_key: str, arg: str, lang: str) -> Answer:
        """Bring back the memory the last /forget removed (within a few minutes)."""
        return Answer(await self.backend.undo(user_key))

    async def cmd_pending(self, user_key: str, arg: str, lang: str) -> Answer:
        """The proposals waiting for an answer, each with its buttons."""
        waiting = tuple(await asyncio.to_thread(self.backend.pending, user_key))
        if not waiting:
            return Answer(say("no_pending", lang))
        return Answer("", proposals=waiting)

    async def cmd_confirm(self, user_key: str, arg: str, lang: str) -> Answer:
        """Confirm a proposal by id, or the only one waiting."""
        return await self._decide(user_key, arg, "confirm", lang)

    async def cmd_discard(self, user_key: str, arg: str, lang: str) -> Answer:
        """Discard a proposal by id, or the only one waiting."""
        return await self._decide(user_key, arg, "reject", lang)

    async def answer_word(
        self, user_key: str, decision: Decision, lang: str, shown_last: str | None
    ) -> Answer | None:
        """A bare 確認 / 好 / ok / 取代 / 取消 the user typed; None when it is ordinary chat.

        It answers a proposal only when it cannot be mistaken: exactly one is waiting and it
        is the bot's last message to the user (``shown_last``, kept by the front end). With
        several waiting it asks which, showing them again; with one the user is not looking
        at, it shows that one and asks. Either way nothing is decided.
        """
        waiting = tuple(await asyncio.to_thread(self.backend.pending, user_key))
        if not waiting:
            return None
        if len(waiting) == 1 and waiting[0].proposal_id == shown_last:
            outcome = await asyncio.to_thread(
                self.backend.decide, user_key, waiting[0].proposal_id, decision, via="word"
            )
            return Answer(outcome_text(outcome, lang))
        ask = "which_pending" if len(waiting) > 1 else "this_pending"
        return Answer(say(ask, lang), proposals=waiting)

    async def _decide(self, user_key: str, arg: str, decision: Decision, lang: str) -> Answer:
        target = arg.split()[0] if arg else ""
        if not target:
            waiting = tuple(await asyncio.to_thread(self.backend.pending, user_key))
            if not waiting:
                return Answer(say("no_pending", lang))
            if len(waiting) > 1:
                return Answer(say("which_pending", lang), proposals=waiting)
            target = waiting[0].proposal_id
        outcome = await asyncio.to_thread(
            self.backend.decide, user_key, target, decision, via="command"
        )
        return Answer(outcome_text(outcome, lang))

    async def cmd_why(self, user_key: str, arg: str, lang: str) -> Answer:
        """Which memories shaped the last reply."""
        used = await asyncio.to_thread(self.backend.why, user_key)
        if not used:
            return Answer(say("no_why", lang))
        lines = [say("why_head", lang)]
        lines += [f"[{m.layer} {m.score:.2f}] {m.text}  ({m.id or m.source})" for m in used]
        return Answer("\n".join(lines))

    async def cmd_history(self, user_key: str, arg: str, lang: str) -> Answer:
        """Memory archaeology for a topic."""
        if not arg:
            return Answer(say("usage_history", lang))
        return Answer(await asyncio.to_thread(self.backend.archaeology, user_key, arg))

    async def cmd_new(self, user_key: str, arg: str, lang: str) -> Answer:
        """Start a fresh session (the old one is summarised first)."""
        return Answer(await self.backend.new_session(user_key))

    async def cmd_export(self, user_key: str, arg: str, lang: str) -> Answer:
        """The user's memories as a Markdown document."""
        md = await asyncio.to_thread(self.backend.export_markdown, user_key)
        name = f"pcai-memory-{datetime.now().astimezone():%Y%m%d}.md"
        return Answer(say("export_caption", lang), document=Document(name, md))

    async def cmd_stats(self, user_key: str, arg: str, lang: str) -> Answer:
        """Counts, index size and last jobs."""
        rows = await asyncio.to_thread(self.backend.stats, user_key)
        return Answer("\n".join([say("stats_head", lang)] + [f"{k}: {v}" for k, v in rows]))


def outcome_text(outcome: Outcome, lang: str) -> str:
    """One line saying what became of a proposal."""
    if outcome.status == "confirmed":
        suffix = f" ({outcome.entry_id})" if outcome.entry_id else ""
        return say("confirmed", lang) + outcome.text + suffix
    if outcome.status == "rejected":
        return say("rejected", lang) + outcome.text
    if outcome.status == "edited" and outcome.proposal is not None:
        return say("edited", lang) + "\n" + proposal_text(outcome.proposal, lang)
    return say(outcome.status if outcome.status in ("expired", "missing") else "missing", lang)
