"""The composition root: reads the settings once and builds every service from them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

import memory
from agent.forget import Forgetter, Stores
from agent.prefetch import QueryAhead
from agent.reminders import acts as reminder_acts
from agent.reminders.service import ReminderService
from agent.reminders.settings import machine_zone
from agent.reminders.store import ReminderStore
from agent.why import WhyLog
from bot.frontdesk.language import Languages
from bot.frontdesk.language_book import LanguageBook
from bot.model_backends import EMBEDDERS
from bot.recovery import recover_at_start
from bot.schema import MIGRATIONS_ALL
from bot.settings import Settings, SettingsError
from history.dailylog import DailyLog
from history.idle import IdleSummaries
from history.sessions import SessionStore
from history.summarize import SummaryService
from memory.base.locks import ServiceLock
from memory.base.tokens import TokenCounter
from memory.config import MemoryConfig
from memory.index.chunks import IndexStore
from memory.index.embedders import Embedder
from memory.state.statedb import StateDB
from memory.state.usage import AccessCounter
from memory.store.service import MemoryService
from memory.write.consent import UserActMint
from memory.write.decisions import ConfirmationService
from memory.write.governance import Governance
from memory.write.lifecycle import Lifecycle
from memory.write.pending import PendingStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent.deferred import DeferredWorker
    from agent.llm import LLMClient
    from agent.pipeline import Agent
    from memory.api import Memory


def build_embedder(settings: Settings) -> Embedder:
    """The embedder the settings name (the embedded e5 model unless told otherwise)."""
    return EMBEDDERS[settings.embedder](settings)


@dataclass(slots=True)
class Services:
    """Every long-lived object of one PCAI process."""

    settings: Settings
    counter: TokenCounter
    embedder: Embedder
    store: IndexStore
    memory: MemoryService
    state: StateDB
    pending: PendingStore
    access: AccessCounter
    governance: Governance
    confirm: ConfirmationService  # proposes for anyone; answers only with a user act
    lifecycle: Lifecycle
    sessions: SessionStore  # the one store (and per-session locks) of the process
    daily_log: DailyLog
    summaries: SummaryService  # extractive until the agent sets an LLM as primary
    idle: IdleSummaries
    tz: tzinfo | None  # the users' time zone; None = the machine's local zone
    # Seals the user's answers to proposals: for the bot layer (Telegram, terminal, operator
    # CLI) only. The agent is built from single services and never receives it.
    user_acts: UserActMint
    forgetter: Forgetter  # /forget, /undo and the undo copies' expiry
    # memory.open's service, which the memory fields above belong to; the operator CLI's door.
    library: Memory
    agent: Agent | None = None  # set by build_agent (chat needs an LLM; commands do not)
    # Reminders and the briefing; the front end that runs gives it a scheduler and a sender.
    reminders: ReminderService | None = None
    languages: Languages | None = None  # each person's one language (chat, page, reminders)

    def close(self) -> None:
        """Release what the services hold open."""
        self.library.close()


def user_timezone(settings: Settings) -> tzinfo | None:
    """The zone ``settings.timezone`` names; None (the machine's local zone) when empty."""
    if not settings.timezone:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(settings.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise SettingsError(
            f"PCAI_TIMEZONE {settings.timezone!r} is not a known time zone"
        ) from exc


def hold_data_dir(settings: Settings) -> ServiceLock:
    """Take the service's exclusive lock on the data dir, or raise ``DataDirBusyError``."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return ServiceLock(settings.data_dir).acquire()


def memory_config(settings: Settings) -> MemoryConfig:
    """The memory package's part of the settings, for :func:`memory.open`."""
    return MemoryConfig(
        retrieval=settings.retrieval,
        index=settings.index,
        pending=settings.pending,
        lifecycle=settings.lifecycle,
        forget_undo_minutes=settings.forget_undo_minutes,
        cache_mb=settings.cache_mb,
    )


def build_services(settings: Settings, embedder: Embedder | None = None) -> Services:
    """Build the services of one process from ``settings``.

    Memory's own services come from :func:`memory.open`; the index is brought up to date by
    the caller (``ensure_index``), so the CLI can show its progress.
    """
    tz = user_timezone(settings)
    # Queries can start embedding as a message arrives (agent.prefetch): the turn's longest step.
    ahead = QueryAhead(embedder or build_embedder(settings))
    mem = memory.open(
        settings.data_dir,
        embedder=ahead,
        settings=memory_config(settings),
        ensure_index=False,
        migrations=MIGRATIONS_ALL,
    )
    sessions = SessionStore(settings.sessions_dir)
    summaries = SummaryService(timeout_seconds=settings.ollama_timeout_seconds)
    daily_log = DailyLog(settings.data_dir, tz)
    forgetter = Forgetter(
        mem.governance,
        mem.undo,
        Stores(mem.pending, mem.short_term, WhyLog(mem.state), mem.access),
        sessions,
        daily_log,
    )
    services = Services(
        settings,
        mem.counter,
        mem.embedder,
        mem.store,
        mem.service,
        state=mem.state,
        pending=mem.pending,
        access=mem.access,
        governance=mem.governance,
        confirm=mem.confirm,
        lifecycle=mem.lifecycle,
        sessions=sessions,
        daily_log=daily_log,
        summaries=summaries,
        idle=IdleSummaries(
            sessions,
            settings.data_dir,
            summaries,
            settings.history,
            tz,
            on_written=mem.indexer.sync_file,
        ),
        tz=tz,
        user_acts=mem.user_acts,
        forgetter=forgetter,
        library=mem,
        reminders=ReminderService(
            ReminderStore(mem.state),
            default_zone=settings.timezone or machine_zone(),
            clock=lambda: datetime.now(UTC),
            snooze_length=timedelta(minutes=settings.reminders_snooze_minutes),
            acts=mem.user_acts.check,  # answers to reminder proposals, like memories: the user's
        ),
        languages=Languages(LanguageBook(mem.state)),
    )
    if services.reminders is not None:  # /undo cancels what a typed /remind set at once
        forgetter.cancel_reminder = services.reminders.cancel
        # undo names a reminder by the number its owner knows, never by its row
        forgetter.reminder_number = services.reminders.store.number_of
        service = services.reminders  # and puts back what a snooze, done or /tz changed
        forgetter.put_back_reminders = lambda user, note: reminder_acts.put_back(
            service, user, note
        )
    # A crash or a damaged pcai.db left something behind: heal it before anyone is served.
    recover_at_start(mem, services.languages)
    return services


def build_agent(services: Services, llm: LLMClient | None = None) -> Agent:
    """Build the per-message agent over ``services`` (the configured model unless ``llm``).

    A configured model whose context cannot hold a turn is refused
    (:class:`~bot.model_context.ContextTooSmallError`, its one line saying what to set).

    The agent shares the process's session store (one lock per session), daily log and
    summary service; it makes the LLM the summary service's primary (idle summaries too).
    """
    from agent.build import assemble_agent
    from bot.llm_setup import build_llm, context_fit, context_length
    from bot.model_context import refuse_small_context

    s = services.settings
    fit, summary_llm = None, None
    if llm is None:  # the configured model server, prompts sized to its context
        context = context_length(s)
        refuse_small_context(s, context, services.counter)  # a message would be cut to nothing
        llm = build_llm(s, services.counter, context)
        fit = context_fit(s, services.counter, context)
        if s.summary_model and s.summary_model != s.chat_model:
            summary_llm = build_llm(s, services.counter, context, s.summary_model)
    services.agent = assemble_agent(
        llm,
        memory=services.memory,
        confirm=services.confirm,
        governance=services.governance,
        access=services.access,
        state=services.state,
        counter=services.counter,
        sessions=services.sessions,
        daily_log=services.daily_log,
        summaries=services.summaries,
        budget=s.budget,
        adaptive=s.adaptive,
        history=s.history,
        topic_index=s.topic_index,
        reminders=services.reminders,
        conversation_turns=s.conversation_turns,
        fit=fit,
        summary_llm=summary_llm,
    )
    return services.agent


def build_worker(services: Services, owns: Callable[[str], bool] | None = None) -> DeferredWorker:
    """The worker that does what the agent's turns leave for later (after :func:`build_agent`).

    The front end owns it: starts it when it starts serving and stops it on the way out.
    ``owns`` limits it to the users that front end serves (None: every user).
    """
    from agent.build import agent_worker

    if services.agent is None:
        raise RuntimeError("build_agent comes first: the worker does the agent's work")
    return agent_worker(services.agent, owns)
