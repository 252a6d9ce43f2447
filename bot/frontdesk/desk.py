"""The commands both front ends share, as plain text in and :class:`Answer` out.

Telegram handlers and the terminal chat call the same :class:`Desk`, so /memory, /confirm
and the rest behave alike everywhere. No Telegram import here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from agent.ids import number_id
from agent.memory_view import file_problem_notice
from agent.selection import FALLBACK
from agent.texts import short, undo_label
from bot.frontdesk.language import parse_choice
from bot.frontdesk.ports import (
    Answer,
    Backend,
    BackendError,
    Decision,
    Document,
    Found,
    Outcome,
    Via,
)
from bot.frontdesk.texts import (
    STATS_KEYS,
    help_text,
    memory_buttons,
    memory_line,
    named,
    overview_text,
    proposal_text,
    say,
    section_label,
)
from history.topic_index import TopicOverview
from memory.errors import UnreadableFileError
from memory.write.archaeology import ChainMatch

PAGE_SIZE = 10


class Desk:
    """Runs one command for one user and says what happened."""

    def __init__(self, backend: Backend, *, typed: bool = False) -> None:
        self.backend = backend
        self.typed = typed  # a front end without buttons (the terminal): how to answer, typed

    async def command(self, user_key: str, name: str, arg: str, lang: str) -> Answer:
        """Run ``/name arg``; an unknown command gets one sentence saying so."""
        handler = getattr(self, f"cmd_{name}", None)
        if handler is None:
            return Answer(say("unknown_command", lang, name=name[:40]), error=True)
        try:
            answer: Answer = await handler(user_key, arg.strip(), lang)
        except BackendError as exc:
            return Answer(exc.said(lang), error=True)
        except UnreadableFileError as exc:  # the user's own file: say which and what to fix
            return Answer(file_problem_notice(exc, exc.path.name, lang), error=True)
        return answer

    async def cmd_start(self, user_key: str, arg: str, lang: str) -> Answer:
        """Greeting."""
        return Answer(say("welcome", lang))

    async def cmd_help(self, user_key: str, arg: str, lang: str) -> Answer:
        """The bilingual command list."""
        return Answer(help_text(lang))

    async def cmd_lang(self, user_key: str, arg: str, lang: str) -> Answer:
        """``/lang zh|en``: the person's language everywhere, from now on."""
        chosen = parse_choice(arg)
        if chosen is None:
            return Answer(say("lang_now", lang))
        await asyncio.to_thread(self.backend.languages.choose, user_key, chosen)
        return Answer(say("lang_set", chosen))

    async def cmd_memory(self, user_key: str, arg: str, lang: str) -> Answer:
        """A page of the user's memories with their ids, and 📌 / ✏️ / 🗑 under each."""
        lines = await asyncio.to_thread(self.backend.memories, user_key)
        if not lines:
            return Answer(say("no_memories", lang))
        pages = (len(lines) + PAGE_SIZE - 1) // PAGE_SIZE
        number = number_id(arg) if arg else 1
        if number is None:  # "/memory ²": not a page number
            return Answer(say("usage_memory", lang), error=True)
        page = max(number, 1)
        if page > pages:
            return Answer(say("no_such_page", lang, page=page, pages=pages), error=True)
        shown = lines[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        first = (page - 1) * PAGE_SIZE + 1
        out = [f"{n}. {memory_line(m, lang)}" for n, m in enumerate(shown, first)]
        if pages > 1:
            nxt = page + 1 if page < pages else 1
            out.append(say("page", lang, page=page, pages=pages, next=nxt))
        out.append(say("memory_legend", lang))
        rows = tuple(memory_buttons(n, m) for n, m in enumerate(shown, first))
        return Answer("\n".join(out), buttons=rows)

    async def cmd_pin(self, user_key: str, arg: str, lang: str) -> Answer:
        """Pin a memory: it goes into every prompt (L0)."""
        return await self._act(user_key, arg, "pin", lang)

    async def cmd_unpin(self, user_key: str, arg: str, lang: str) -> Answer:
        """Unpin a memory."""
        return await self._act(user_key, arg, "unpin", lang)

    async def cmd_keep(self, user_key: str, arg: str, lang: str) -> Answer:
        """Keep a fading memory (the weekly notice's button, typed)."""
        return await self._act(user_key, arg, "keep", lang)

    async def cmd_restore(self, user_key: str, arg: str, lang: str) -> Answer:
        """Bring an archived memory back."""
        return await self._act(user_key, arg, "restore", lang)

    async def cmd_edit(self, user_key: str, arg: str, lang: str) -> Answer:
        """``/edit <id> <new text>``: a new version supersedes the memory."""
        entry_id, _, text = arg.partition(" ")
        if not entry_id or not text.strip():
            return Answer(say("usage_edit", lang))
        return Answer(await self.revise(user_key, entry_id, text.strip(), lang, via="command"))

    async def cmd_scope(self, user_key: str, arg: str, lang: str) -> Answer:
        """``/scope <id> project:x | lang:y | global``."""
        parts = arg.split()
        if len(parts) != 2:
            return Answer(say("usage_scope", lang))
        line = await asyncio.to_thread(
            self.backend.set_scope, user_key, parts[0], parts[1], via="command"
        )
        return Answer(say("scoped", lang, scope=line.scope) + line.text)

    async def cmd_archived(self, user_key: str, arg: str, lang: str) -> Answer:
        """The archived memories, with their ids for /restore."""
        gone = await asyncio.to_thread(self.backend.archived, user_key)
        if not gone:
            return Answer(say("no_archived", lang))
        out = [say("archived_head", lang)] + [memory_line(m, lang) for m in gone[:50]]
        return Answer("\n".join(out))

    async def revise(self, user_key: str, entry_id: str, text: str, lang: str, *, via: Via) -> str:
        """The user's new text for a memory (a command or a reply to ✏️); one line back."""
        line = await asyncio.to_thread(self.backend.revise, user_key, entry_id, text, via=via)
        return say("revised", lang, new=line.id, old=entry_id) + line.text

    async def memory_button(self, user_key: str, code: str, entry_id: str, lang: str) -> str:
        """A press of 📌 / 📍 / 🗑 under /memory, or ✅ keep under the fading notice."""
        action = {"p": "pin", "u": "unpin", "k": "keep"}.get(code)
        try:
            if action is not None:
                return (await self._act(user_key, entry_id, action, lang, via="button")).text
            if code == "f":
                return await self.backend.forget(user_key, entry_id, lang)
        except BackendError as exc:
            return exc.said(lang)
        return say("missing", lang)

    async def _act(
        self, user_key: str, arg: str, action: str, lang: str, via: Via = "command"
    ) -> Answer:
        entry_id = arg.split()[0] if arg else ""
        if not entry_id:
            return Answer(say(f"usage_{action}", lang))
        b = self.backend
        if action in ("pin", "unpin"):
            line = await asyncio.to_thread(b.pin, user_key, entry_id, action == "pin", via=via)
        elif action == "keep":
            line = await asyncio.to_thread(b.keep, user_key, entry_id, via=via)
        else:
            line = await asyncio.to_thread(b.restore, user_key, entry_id, via=via)
        done = {"pin": "pinned", "unpin": "unpinned", "keep": "kept", "restore": "restored"}
        return Answer(say(done[action], lang) + f"{line.text} ({line.id})")

    async def cmd_search(self, user_key: str, arg: str, lang: str) -> Answer:
        """Search the user's memories."""
        if not arg:
            return Answer(say("usage_search", lang))
        hits = await asyncio.to_thread(self.backend.search, user_key, arg)
        if not hits:
            return Answer(say("nothing_found", lang))
        lines = [
            f"{i}. [{h.score:.2f}] {h.text}  ({_where(h, lang)})" for i, h in enumerate(hits, 1)
        ]
        return Answer("\n".join(lines))

    async def cmd_remember(self, user_key: str, arg: str, lang: str) -> Answer:
        """Remember at once, with Undo: the command the user typed is their own act.

        Proposed (every guard a proposal meets), then confirmed by the path a "yes" takes;
        one close to a kept memory still waits: add or replace is the user's to say.
        """
        if not arg:
            return Answer(say("usage_remember", lang))
        b, now = self.backend, datetime.now().astimezone()
        proposal = await asyncio.to_thread(b.propose, user_key, arg, now)
        if proposal.conflicts_shown:
            return Answer("", proposals=(proposal,))
        done = await asyncio.to_thread(
            b.decide, user_key, proposal.proposal_id, "confirm", via="command"
        )
        made = f"memory:{done.entry_id}"
        minutes = await asyncio.to_thread(b.note_made, user_key, made) if done.entry_id else 0
        if not minutes:  # not saved after all, or nothing here can undo: no Undo promised
            return Answer(outcome_text(done, lang), error=done.status != "confirmed")
        said = say("remembered_now", lang, text=done.text, entry_id=done.entry_id, minutes=minutes)
        # The button names what it takes back, before it is pressed.
        label = undo_label(say("act_remember", lang, text=short(done.text)), lang)
        undo = () if self.typed else (((label, f"ud:{made}"[:64]),),)
        return Answer(said, buttons=undo)

    async def cmd_forget(self, user_key: str, arg: str, lang: str) -> Answer:
        """Forget one memory by id."""
        if not arg:
            return Answer(say("usage_forget", lang))
        return Answer(await self.backend.forget(user_key, arg.split()[0], lang))

    async def cmd_undo(self, user_key: str, arg: str, lang: str) -> Answer:
        """Take back the person's last act, named (within a few minutes)."""
        return Answer(await self.backend.undo(user_key, lang))

    async def cmd_pending(self, user_key: str, arg: str, lang: str) -> Answer:
        """The proposals waiting for an answer, each with its buttons."""
        waiting = tuple(await asyncio.to_thread(self.backend.pending, user_key))
        desk = getattr(self.backend, "reminders", None)  # reminder proposals wait here too
        timed = await asyncio.to_thread(desk.waiting, user_key) if desk is not None else ()
        if not waiting and not timed:
            return Answer(say("no_pending", lang))
        return Answer("", proposals=waiting, reminders=timed)

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
        return Answer(self._which(len(waiting), lang), proposals=waiting)

    def _which(self, waiting: int, lang: str) -> str:
        """Which proposal? (several waiting) or this one? (one): with buttons, or typed."""
        ask = "which_pending" if waiting > 1 else "this_pending"
        return say(ask + "_typed" * self.typed, lang)

    async def _decide(self, user_key: str, arg: str, decision: Decision, lang: str) -> Answer:
        target = arg.split()[0] if arg else ""
        if not target:
            waiting = tuple(await asyncio.to_thread(self.backend.pending, user_key))
            if not waiting:
                return Answer(say("no_pending", lang))
            if len(waiting) > 1:
                return Answer(self._which(len(waiting), lang), proposals=waiting)
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
        for m in used:
            # The overview (nothing found) names sections: each in the reader's half.
            text = overview_text(m.text, lang) if m.layer == FALLBACK else m.text
            lines.append(
                f"[{named('layer', m.layer, lang)} {m.score:.2f}] {text}  ({m.id or m.source})"
            )
        return Answer("\n".join(lines))

    async def cmd_history(self, user_key: str, arg: str, lang: str) -> Answer:
        """Memory archaeology for a topic."""
        if not arg:
            return Answer(say("usage_history", lang))
        return Answer(await asyncio.to_thread(self.backend.archaeology, user_key, arg, lang))

    async def cmd_new(self, user_key: str, arg: str, lang: str) -> Answer:
        """Start a fresh session (the old one is summarised first)."""
        said = await self.backend.new_session(user_key, lang)
        # The last act now, though /undo cannot take it back: it never reaches past it.
        await asyncio.to_thread(self.backend.note_made, user_key, "final:new")
        return Answer(said)

    async def cmd_export(self, user_key: str, arg: str, lang: str) -> Answer:
        """The user's memories as a Markdown document."""
        md = await asyncio.to_thread(self.backend.export_markdown, user_key)
        name = f"pcai-memory-{datetime.now().astimezone():%Y%m%d}.md"
        return Answer(say("export_caption", lang), document=Document(name, md))

    async def cmd_stats(self, user_key: str, arg: str, lang: str) -> Answer:
        """Counts, index size and last jobs."""
        rows = list(await asyncio.to_thread(self.backend.stats, user_key, lang))
        topics = getattr(self.backend, "topics", None)
        if topics is not None:
            rows += topic_rows(await asyncio.to_thread(topics.overview, user_key), lang)
        labelled = [f"{say(STATS_KEYS[k], lang) if k in STATS_KEYS else k}: {v}" for k, v in rows]
        return Answer("\n".join([say("stats_head", lang), *labelled]))

    async def cmd_web(self, user_key: str, arg: str, lang: str) -> Answer:
        """A one-time login link to the user's memory page."""
        url = await asyncio.to_thread(self.backend.web_link, user_key, lang)
        text = say("web_link", lang, url=url)
        if url.startswith(("http://127.", "http://localhost", "http://[::1]")):
            text += "\n" + say("web_local", lang)  # a phone cannot reach the bot's loopback
        return Answer(text)


def outcome_text(outcome: Outcome, lang: str) -> str:
    """One line saying what became of a proposal."""
    if outcome.status == "confirmed":
        suffix = f" ({outcome.entry_id})" if outcome.entry_id else ""
        if outcome.replaced:
            suffix += say("replaced", lang, ids=", ".join(outcome.replaced))
        return say("confirmed", lang) + outcome.text + suffix
    if outcome.status == "rejected":
        return say("rejected", lang) + outcome.text
    if outcome.status == "edited" and outcome.proposal is not None:
        return say("edited", lang) + "\n" + proposal_text(outcome.proposal, lang)
    return say(outcome.status if outcome.status in ("expired", "missing") else "missing", lang)


def topic_rows(overview: TopicOverview, lang: str = "en") -> list[tuple[str, str]]:
    """``/stats`` rows for the topic index: the current topic and the sections to prune."""
    rows = []
    if overview.current_topic:
        turns = say("stats_row_turns", lang)
        topic = section_label(overview.current_topic, lang)
        line = f"{topic} ({overview.share:.0%} / {overview.turns} {turns})"
        if overview.topic_summary:
            line += f": {overview.topic_summary}"
        rows.append((say("stats_topic", lang), line))
    if overview.prune:
        advice = say("stats_prune_advice", lang)
        names = ", ".join(section_label(s, lang) for s in overview.prune)
        rows.append((say("stats_prune", lang), f"{names} — {advice}"))
    return rows


def history_lines(query: str, matches: Sequence[ChainMatch], lang: str = "en") -> str:
    """``/history``: each matching chain as a timeline, oldest version first, in ``lang``.

    ``咖啡 → drink_preference`` heads a chain found through its topic (an id asked for needs no
    heading); each version shows its date, status, id and text, a newer one ``(← replaced id)``.
    """
    if not matches:
        return say("no_history_topic", lang, topic=query)
    out: list[str] = []
    untitled: list[str] = []  # chains with no topic share one heading: the query's
    for match in matches:
        lines = []
        for i, e in enumerate(match.chain):
            arrow = "  ↳ " if i else "  • "
            replaced = f"  (← {', '.join(e.supersedes)})" if e.supersedes else ""
            when = e.created_at[:16].replace("T", " ")
            lines.append(
                f"{arrow}{when} [{named('status', e.status, lang)}] {e.id}: {e.text}{replaced}"
            )
        if match.via != "id" and not match.topic:
            untitled += lines
            continue
        if out:
            out.append("")
        if match.via != "id":
            out.append(f"{query} → {match.topic}")
        out += lines
    if untitled:
        out += [*([""] if out else []), f"{query}:", *untitled]
    return "\n".join(out)


def _where(hit: Found, lang: str) -> str:
    """Where a search result comes from; a memory's id too, to act on (/forget, /pin).

    A line of the daily log says the day it was said in conversation: it is no memory (a
    proposal the person refused leaves only that line).
    """
    if hit.said_on:
        return say("found_said", lang, day=hit.said_on)
    return f"{hit.source} · {hit.id}" if hit.source == "MEMORY.md" and hit.id else hit.source
