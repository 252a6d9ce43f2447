"""The :class:`~bot.frontdesk.ports.Backend` over the real services (no Telegram import).

Memory reads (list, search, export, stats) go straight to :class:`MemoryService`. The agent,
the confirmation service, governance and sessions are reached through the small protocols
below, so each lands independently; one that is not wired yet answers with one sentence
instead of failing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agent.memory_view import said_on
from agent.reminders.desk import ReminderDesk
from agent.streaming import ReplySink
from agent.texts import LANGUAGES, say
from agent.types import IncomingMessage, InjectedMemory, ProposalView, Reply
from bot.frontdesk.language import Languages
from bot.frontdesk.ports import (
    BackendError,
    Confirmations,
    Curations,
    Decision,
    Found,
    LinkIssuer,
    MemoryLine,
    Outcome,
    Via,
)
from bot.frontdesk.reminder_desk import reminder_desk_for
from bot.model_backends import ModelServer, model_server, ollama_reachable
from bot.settings import Settings
from history.topic_index import TopicIndex
from memory.base.markdown import MemoryStatus
from memory.store.service import MemoryService
from memory.write.decisions import parse_reply

if TYPE_CHECKING:
    from bot.app import Services


class Responder(Protocol):
    """The agent: one message in, one reply out."""

    async def respond(self, msg: IncomingMessage, stream: ReplySink | None = None) -> Reply:
        """Answer one message (``stream``: the reply as it is written)."""
        ...

    def why(self, user_key: str) -> Sequence[InjectedMemory]:
        """The memories injected into the user's last prompt."""
        ...

    async def new_session(
        self, user_key: str, now: datetime | None = None, lang: str = "en"
    ) -> str:
        """Summarise the conversation and start a fresh one (the agent owns sessions)."""
        ...


@runtime_checkable
class ClosableModel(Protocol):
    """A model client holding a connection of this event loop (the real SDK clients)."""

    async def aclose(self) -> None:
        """Close the client's connections."""
        ...


class Keeper(Protocol):
    """Governance: forgetting, archaeology, flushing."""

    async def forget(self, user_key: str, memory_id: str, lang: str = "en") -> str:
        """Forget one memory."""
        ...

    async def undo(self, user_key: str, lang: str = "en", made: str = "") -> str:
        """Take back the last forget, typed /remember or /remind (or the one ``made`` names)."""
        ...

    def note_made(self, user_key: str, made: str) -> int:
        """A typed command did ``made`` at once: undoable for the minutes returned."""
        ...

    def archaeology(self, user_key: str, topic: str, lang: str = "en") -> str:
        """A topic's history, in ``lang``."""
        ...

    async def flush(self) -> None:
        """Write out what is held in memory."""
        ...


def classify_words(text: str) -> Decision | None:
    """A confirm (確認, yes), replace (取代) or reject (取消, no) word, read by the write path."""
    intent = parse_reply(text)
    if intent is None:
        return None
    if intent.action == "reject":
        return "reject"
    return "replace" if intent.replace else "confirm"


@dataclass(slots=True)
class ServicesBackend:
    """Backend over the composition root's services; missing parts answer politely."""

    memory: MemoryService
    chat_model: str
    responder: Responder | None = None
    confirmations: Confirmations | None = None
    keeper: Keeper | None = None
    curations: Curations | None = None
    llm_up: bool = True
    # The model server the settings name (bot.model_backends): the terminal asks it whether
    # chat can work and names it when it cannot.
    server: ModelServer = field(default_factory=lambda: model_server(Settings()))
    # The scheduler's last run of each job (set by whoever starts the jobs), for /stats.
    job_status: Callable[[], Sequence[tuple[str, str]]] | None = None
    topics: TopicIndex | None = None  # the current topic and prune advice, for /stats
    reminders: ReminderDesk | None = None  # /remind, /reminders, /tz, /briefing, their buttons
    web: LinkIssuer | None = None  # the memory page of this process, when it is served
    languages: Languages = field(default_factory=Languages)  # each person's one language
    model_client: ClosableModel | None = None  # closed at flush (its loop ends with the front)

    def _conf(self) -> Confirmations:
        if self.confirmations is None:
            raise said_error("unavailable_confirm")
        return self.confirmations

    def _cur(self) -> Curations:
        if self.curations is None:
            raise said_error("unavailable_curation")
        return self.curations

    def _keeper(self) -> Keeper:
        if self.keeper is None:
            raise said_error("unavailable_command")
        return self.keeper

    async def respond(self, msg: IncomingMessage, stream: ReplySink | None = None) -> Reply:
        """Ask the agent, or say plainly that chat needs the model server.

        A server that did not answer at start is asked again: it may have been started since
        (the start already said what to start, so this says only that it still does not)."""
        if self.responder is None:
            return Reply(self.model_down(msg.language), error=True)
        if not self.llm_up:
            if not await asyncio.to_thread(self.server.reachable):
                said = say("model_still_down", msg.language, url=self.server.where)
                return Reply(said, error=True)
            self.llm_up = True
        return await self.responder.respond(msg, stream)

    def model_down(self, lang: str) -> str:
        """The one sentence saying chat needs the configured server (named, with its address)."""
        return self.server.down(lang)

    def why(self, user_key: str) -> Sequence[InjectedMemory]:
        """From the agent."""
        return self.responder.why(user_key) if self.responder else ()

    def propose(self, user_key: str, text: str, now: datetime) -> ProposalView:
        """Through the confirmation service."""
        return self._conf().propose(user_key, text, now)

    def decide(self, user_key: str, proposal_id: str, decision: Decision, *, via: Via) -> Outcome:
        """Through the confirmation service, as the user's act (a date in it: offer a reminder)."""
        outcome = self._conf().decide(user_key, proposal_id, decision, via=via)
        if outcome.status == "confirmed" and self.reminders is not None:
            self.reminders.note_confirmed(user_key, outcome.entry_id, outcome.text)
        return outcome

    def edit(self, user_key: str, proposal_id: str, text: str, *, via: Via) -> Outcome:
        """Through the confirmation service, as the user's act."""
        return self._conf().edit(user_key, proposal_id, text, via=via)

    def pending(self, user_key: str) -> Sequence[ProposalView]:
        """Through the confirmation service (none when it is missing)."""
        return self.confirmations.pending(user_key) if self.confirmations else ()

    def attach(self, user_key: str, proposal_id: str, message_id: str) -> None:
        """Through the confirmation service."""
        if self.confirmations is not None:
            self.confirmations.attach(user_key, proposal_id, message_id)

    def proposal_for_message(self, user_key: str, message_id: str) -> str | None:
        """Through the confirmation service."""
        if self.confirmations is None:
            return None
        return self.confirmations.proposal_for_message(user_key, message_id)

    def classify(self, text: str) -> Decision | None:
        """Confirm and reject words in Chinese and English."""
        return classify_words(text)

    def memories(self, user_key: str) -> Sequence[MemoryLine]:
        """The current version of each memory that is not archived (older ones: /history)."""
        return [
            MemoryLine(e.id, e.text, e.section, e.status, e.is_core, e.user_weight, e.scope)
            for e in self.memory.entries(user_key)
            if e.status not in (MemoryStatus.ARCHIVED, MemoryStatus.DEPRECATED)
        ]

    def pin(self, user_key: str, entry_id: str, core: bool, *, via: Via) -> MemoryLine:
        """Through the curation adapter, as the user's act."""
        return self._cur().pin(user_key, entry_id, core, via=via)

    def set_scope(self, user_key: str, entry_id: str, scope: str, *, via: Via) -> MemoryLine:
        """Through the curation adapter, as the user's act."""
        return self._cur().set_scope(user_key, entry_id, scope, via=via)

    def revise(self, user_key: str, entry_id: str, text: str, *, via: Via) -> MemoryLine:
        """Through the curation adapter, as the user's act."""
        return self._cur().revise(user_key, entry_id, text, via=via)

    def keep(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Through the curation adapter, as the user's act."""
        return self._cur().keep(user_key, entry_id, via=via)

    def restore(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Through the curation adapter, as the user's act."""
        return self._cur().restore(user_key, entry_id, via=via)

    def archived(self, user_key: str) -> Sequence[MemoryLine]:
        """Through the curation adapter (none when it is missing)."""
        return self.curations.archived(user_key) if self.curations else ()

    def search(self, user_key: str, query: str) -> Sequence[Found]:
        """Hybrid search over the user's own files."""
        return [
            Found(h.score, h.chunk.text, h.chunk.path, h.chunk.unit_id, said_on(h.chunk))
            for h in self.memory.search(user_key, query)
        ]

    async def forget(self, user_key: str, memory_id: str, lang: str = "en") -> str:
        """Through governance."""
        return await self._keeper().forget(user_key, memory_id, lang)

    async def undo(self, user_key: str, lang: str = "en", made: str = "") -> str:
        """Through governance."""
        return await self._keeper().undo(user_key, lang, made)

    def note_made(self, user_key: str, made: str) -> int:
        """Through governance (0 minutes: nothing to undo with when it is missing)."""
        return self.keeper.note_made(user_key, made) if self.keeper is not None else 0

    def archaeology(self, user_key: str, topic: str, lang: str = "en") -> str:
        """Through governance."""
        return self._keeper().archaeology(user_key, topic, lang)

    async def new_session(self, user_key: str, lang: str = "en") -> str:
        """Through the agent, which owns the sessions."""
        if self.responder is None:
            raise said_error("needs_agent")
        return await self.responder.new_session(user_key, lang=lang)

    def export_markdown(self, user_key: str) -> str:
        """The user's MEMORY.md as PCAI writes it."""
        return self.memory.export_markdown(user_key)

    def stats(self, user_key: str, lang: str = "en") -> Sequence[tuple[str, str]]:
        """Counts from the user's own files and index rows, and when each job last ran (the
        values worded in ``lang``; the labels are the desk's).

        Nothing shared is shown (the index file's size, a job's report): those would tell one
        user about the others.
        """
        entries = self.memory.entries(user_key)
        current = [e for e in entries if e.status != MemoryStatus.DEPRECATED]
        active = sum(1 for e in current if e.status == MemoryStatus.ACTIVE)
        older = len(entries) - len(current)
        paths = self.memory.paths(user_key)
        logs = sorted(paths.root.glob("memory/*.md")) if paths.root.exists() else []
        jobs = self.job_status() if self.job_status is not None else ()
        return [
            ("memories", say("stats_memories", lang, total=len(current), active=active)),
            *((("older versions", f"{older} (/history)"),) if older else ()),
            ("pending", str(len(self.pending(user_key)))),
            *(
                (("pending reminders", self._reminders_now(user_key, lang)),)
                if self.reminders
                else ()
            ),
            ("daily logs", str(len(logs))),
            ("indexed chunks", str(self.memory.indexer.store.count(user_key))),
            *(job_row(name, run, lang) for name, run in jobs),
        ]

    def _reminders_now(self, user_key: str, lang: str) -> str:
        """How many reminders are set to ring, and how many proposals wait for a yes."""
        assert self.reminders is not None
        coming, waiting = self.reminders.coming(user_key), len(self.reminders.waiting(user_key))
        if not waiting:
            return str(coming)
        return say("stats_reminders_waiting", lang, set=coming, waiting=waiting)

    def web_link(self, user_key: str, lang: str) -> str:
        """A one-time login link to the memory page this process serves (``pcai chat``: the
        page of the ``pcai run`` on the same data folder)."""
        if self.web is None or not self.web.running:
            raise BackendError(say("web_off", lang))
        try:
            return self.web.link(user_key, lang)
        except LookupError:  # the service beside this chat stopped its page just now
            raise BackendError(say("web_off", lang)) from None

    def chat_available(self) -> bool:
        """Whether chat can reach the model."""
        return self.responder is not None and self.llm_up

    async def flush(self) -> None:
        """Flush through the keeper, if any, and close the model client of this loop."""
        if self.keeper is not None:
            await self.keeper.flush()
        if self.model_client is not None:
            await self.model_client.aclose()


def said_error(key: str) -> BackendError:
    """A :class:`BackendError` whose sentence is catalogue ``key`` in the reader's language."""
    return BackendError(say(key, "en"), {lang: say(key, lang) for lang in LANGUAGES})


def job_row(name: str, run: str, lang: str) -> tuple[str, str]:
    """A job's ``/stats`` row (``"11-26 03:00 ok"``), its verdict in ``lang``."""
    when, _, verdict = run.rpartition(" ")
    word = {"ok": "job_ok", "FAILED": "job_failed"}.get(verdict)
    return name, f"{when} {say(word, lang)}" if word and when else run


__all__ = ["ServicesBackend", "backend_for", "classify_words", "ollama_reachable"]


def backend_for(services: Services, *, check_llm: bool = False) -> ServicesBackend:
    """The backend over what the composition root built: the one place it is unpacked.

    The confirmation adapter gets the process's user-act mint: the front ends that hold this
    backend are the only code that can answer a proposal.
    """
    from bot.frontdesk.adapters import ConfirmAdapter, CurationAdapter, GovernanceKeeper

    settings = services.settings
    server = model_server(settings)  # the one backend Telegram's agent was built on too
    confirm, acts = services.confirm, services.user_acts
    llm = services.agent.llm if services.agent is not None else None
    return ServicesBackend(
        memory=services.memory,
        chat_model=settings.chat_model,
        responder=services.agent,
        confirmations=ConfirmAdapter(confirm, acts),
        keeper=GovernanceKeeper(services.governance, services.forgetter),
        curations=CurationAdapter(confirm, acts),
        llm_up=server.reachable() if check_llm else True,
        server=server,
        topics=TopicIndex(settings.data_dir, settings.topic_index),
        reminders=reminder_desk_for(services),
        languages=services.languages or Languages(),
        # a scripted model (tests) holds no connection to close
        model_client=llm if isinstance(llm, ClosableModel) else None,
    )
