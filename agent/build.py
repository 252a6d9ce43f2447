"""Assemble the :class:`~agent.pipeline.Agent` from services the composition root built.

``bot.app.build_agent`` calls :func:`assemble_agent` with plain values (no settings object),
so ``agent/`` never imports ``bot/``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from agent.afterwork import build_worker
from agent.context_fit import ContextFit, sized_budget, sized_history
from agent.deferred import DeferredWorker, WorkQueue
from agent.llm import LLMClient
from agent.memory_view import MemoryView, ShortTermLookup
from agent.notices import NoticeBook
from agent.pipeline import Agent
from agent.prefetch import QueryAhead
from agent.query import ConversationQuery
from agent.reminders.service import ReminderService
from agent.selection import SHORT_TERM, Candidate
from agent.summarizer import LastPrompts, LLMSummarizer
from agent.why import WhyLog
from history.compaction import Compactor
from history.config import HistoryConfig, TopicIndexConfig
from history.dailylog import DailyLog
from history.sessions import SessionStore
from history.summarize import SummaryService
from history.topic_index import TopicIndex
from memory.base.tokens import TokenCounter
from memory.config import AdaptiveConfig, BudgetConfig
from memory.search.adaptive import decide_retrieval
from memory.state.short_term import ShortTermStore
from memory.state.statedb import StateDB
from memory.state.usage import AccessCounter
from memory.store.service import MemoryService
from memory.write.decisions import ConfirmationService
from memory.write.governance import Governance


def short_term_lookup(store: ShortTermStore) -> ShortTermLookup:
    """The latest rows of each short-term category the message names."""

    def lookup(user_key: str, text: str, latest: int) -> Sequence[Candidate]:
        out = []
        for row in store.for_message(user_key, text, latest):
            digest = hashlib.sha1(f"{row.created_at}|{row.content}".encode()).hexdigest()[:8]
            out.append(
                Candidate(
                    id=f"short-term:{row.category}:{digest}",
                    layer=SHORT_TERM,
                    score=0.0,
                    text=row.content,
                    source=f"short-term § {row.category}",
                    date=row.created_at[:10],
                )
            )
        return out

    return lookup


def _index_summary(memory: MemoryService, user_key: str, rel: str) -> None:
    """Index a /new summary's MEMORY_FULL.md now: the history it replaced must stay findable.

    The daily log it also appends to is left to the index job (every minute): embedding the
    day's new log lines here would hold up the answer to /new.
    """
    if not rel.startswith("memory/"):
        memory.indexer.sync_file(user_key, rel)


def agent_worker(
    agent: Agent, owns: Callable[[str], bool] | None = None, tick: float | None = None
) -> DeferredWorker:
    """The background worker that does what ``agent``'s turns leave for later.

    ``owns`` limits it to the users its front end serves (None: every user).
    """
    extra = {} if tick is None else {"tick": tick}
    return build_worker(
        agent.work,
        agent.view.memory.indexer,
        agent.topics,
        agent.compactor,
        agent.sessions,
        notices=agent.notices,
        warm=agent.view.prepare,
        entries=lambda user_key: agent.view.parsed(user_key).by_id,
        owns=owns,
        prompts=agent.prompts,
        **extra,
    )


def assemble_agent(
    llm: LLMClient,
    *,
    memory: MemoryService,
    confirm: ConfirmationService,
    governance: Governance,
    access: AccessCounter,
    state: StateDB,
    counter: TokenCounter,
    sessions: SessionStore,
    daily_log: DailyLog,
    summaries: SummaryService,
    budget: BudgetConfig,
    adaptive: AdaptiveConfig,
    history: HistoryConfig,
    topic_index: TopicIndexConfig,
    reminders: ReminderService | None = None,
    conversation_turns: int = ConversationQuery().turns,
    fit: ContextFit | None = None,
    summary_llm: LLMClient | None = None,
) -> Agent:
    """Build the agent over the shared services; the LLM becomes the summaries' primary.

    With ``fit`` (the model's context), the compaction threshold and the memory block are
    sized to it and every prompt is cut to it; ``summary_llm`` writes the summaries if given.
    """
    summaries.primary = LLMSummarizer(summary_llm or llm)
    if fit is not None:
        history, budget = sized_history(history, fit), sized_budget(budget, fit)
    ahead = memory.searcher.embedder  # the composition root wraps it in a QueryAhead
    data_dir = memory.data_dir
    compactor = Compactor(
        data_dir,
        summaries,
        counter,
        history,
        daily_log,
        on_written=lambda user_key, rel: _index_summary(memory, user_key, rel),
    )
    topics = TopicIndex(data_dir, topic_index)
    short_term = ShortTermStore(state)
    view = MemoryView(
        memory,
        topics,
        budget,
        counter,
        decide=lambda text, turns: decide_retrieval(text, turn=turns, config=adaptive).retrieve,
        short_term=short_term_lookup(short_term),
        conversation=ConversationQuery(turns=conversation_turns),
    )
    return Agent(
        llm=llm,
        view=view,
        sessions=sessions,
        daily_log=daily_log,
        message_summaries=SummaryService(None),
        compactor=compactor,
        topics=topics,
        confirm=confirm,
        governance=governance,
        access=access,
        counter=counter,
        history=history,
        why_log=WhyLog(state),
        work=WorkQueue(state),
        ahead=ahead if isinstance(ahead, QueryAhead) else None,
        notices=NoticeBook(state),
        short_term=short_term,
        reminders=reminders,
        prompts=LastPrompts(),
        fit=fit,
    )
