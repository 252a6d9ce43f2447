"""One message in, one reply out (docs/architecture.md, "One message, start to finish").

Every step is timed and logged at debug level with its duration; the timings travel back in
:attr:`Reply.timings` (``bench/pipeline.py`` reads them). A failing model never loses the
user's message: it is in the session and the daily log before the model is asked, and the
session is saved on the way out whatever happens.

The turn waits only for what its answer needs (docs/architecture.md, "Work that can wait").
Indexing the message's log lines, the compaction (summary, files, trim) and the topic index
are :class:`~agent.deferred.Task` rows appended to the user's queue once the session and the
daily log are written, before the reply goes out; the app's worker does them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial

from agent.context_fit import ContextFit
from agent.deferred import Task, WorkQueue
from agent.errors import LLMContextError, LLMError, is_disk_full, log_llm_failure
from agent.group_turn import group_turn
from agent.llm import LLMClient
from agent.memory_view import (
    MAX_QUERY_CHARS,
    MemoryView,
    file_problem_notice,
    problem_topic,
    shown_in_window,
)
from agent.notices import NoticeBook
from agent.prefetch import QueryAhead
from agent.prompt import (
    detect_language,
    injected_memories,
    pinned_lines,
    system_prompt,
    turn_block,
    turn_messages,
)
from agent.remember import settle_reply
from agent.reminders.service import ReminderService
from agent.said import SaidSecrets
from agent.selection import Selection
from agent.streaming import ReplySink, StreamGuard
from agent.summarizer import LastPrompts
from agent.texts import say, summary_name
from agent.tools import MAX_TOOL_ROUNDS, ToolBox
from agent.turn.llm import ask, failure_reply, forced_compaction
from agent.turn.notes import note_short_term, session_id_of, session_notice
from agent.turn.tools import TurnTools, proposal_view
from agent.turn.work import (
    compaction_task,
    index_task,
    keep_prompt,
    queue_tasks,
    topics_task,
)
from agent.types import IncomingMessage, InjectedMemory, Reply, StepClock
from agent.why import WhyLog
from history.compaction import Compactor
from history.config import HistoryConfig
from history.context import fill_summaries, history_window, summary_room
from history.dailylog import DailyLog
from history.sessions import ROLE_ASSISTANT, ROLE_USER, Session, SessionStore
from history.summarize import SummaryService
from history.topic_index import TopicIndex
from memory.base.guards import mask
from memory.base.tokens import TokenCounter
from memory.errors import UnreadableFileError
from memory.state.short_term import ShortTermStore
from memory.state.usage import AccessCounter
from memory.write.decisions import ConfirmationService
from memory.write.governance import Governance

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Agent:
    """The per-message pipeline over the memory and history services."""

    llm: LLMClient
    view: MemoryView
    sessions: SessionStore
    daily_log: DailyLog
    # The per-message summaries run on every turn, so they are extractive (no model
    # call before each answer); compaction's rarer conversation summaries use the model.
    message_summaries: SummaryService
    compactor: Compactor
    topics: TopicIndex
    confirm: ConfirmationService
    governance: Governance
    access: AccessCounter
    counter: TokenCounter
    history: HistoryConfig
    why_log: WhyLog
    work: WorkQueue  # what each turn leaves for the background worker
    ahead: QueryAhead | None = None  # starts the query's embedding as the message arrives
    allowed: Callable[[IncomingMessage], bool] | None = None
    max_tool_rounds: int = MAX_TOOL_ROUNDS
    notices: NoticeBook | None = None  # what each user was told about their unreadable files
    short_term: ShortTermStore | None = None  # the weather/calendar/mail notes
    reminders: ReminderService | None = None  # offers reminder_create (proposals only)
    # The prompt of a turn that planned a compaction, for the summary to share its prefix.
    prompts: LastPrompts | None = None
    # The model's context: each prompt is cut to fit it (None: sent as built, tests' fakes).
    fit: ContextFit | None = None
    said: SaidSecrets = field(default_factory=SaidSecrets)  # in memory only, never stored

    async def new_session(
        self, user_key: str, now: datetime | None = None, lang: str = "en"
    ) -> str:
        """Start a fresh conversation; the old one is summarised into MEMORY_FULL.md first.

        Returns the one line saying so, in ``lang`` (the person's language).
        """
        now = now or datetime.now(UTC)
        async with self.sessions.locked(user_key) as session:
            result = await self.compactor.summarise_all(session, user_key, now)
            self.said.forget(session.id)  # a new conversation: what was said goes with it
        self.why_log.clear(user_key)
        if result is None:
            return say("new_session", lang)
        heading = summary_name(result.heading, lang)
        return say("new_session_summarised", lang, heading=heading)

    def why(self, user_key: str) -> tuple[InjectedMemory, ...]:
        """The memories injected into ``user_key``'s last prompt (ids, layers, scores)."""
        return self.why_log.last(user_key)

    async def respond(self, message: IncomingMessage, stream: ReplySink | None = None) -> Reply:
        """Answer one message (steps 1-11); ``stream`` sees the reply as it is written
        (what may be shown so far, :mod:`agent.streaming`)."""
        clock = StepClock(message.user_key)
        lang = detect_language(message.text, message.language)
        later: list[Task] = []  # what this turn leaves for the worker
        async with AsyncExitStack() as stack:
            with clock.step("1 access+session"):
                if self.allowed is not None and not self.allowed(message):
                    return Reply(say("denied", lang), error=True)
                session_id = session_id_of(message)
                if session_id is None:  # a transport bug must not fall back to private data
                    log.error("%s: a group message came without its group", message.user_key)
                    return Reply(say("failed", lang), error=True)
                self._start_query(message)
                session = await stack.enter_async_context(self.sessions.locked(session_id))
            problems: list[UnreadableFileError] = []  # the user's files this turn went without
            try:
                known = self.said.add(session.id, message.text)  # said in this conversation
                guard = StreamGuard(stream, known) if stream else None
                if message.in_group:
                    reply = await group_turn(self, message, session, lang, clock, guard)
                else:
                    reply = await self._turn(message, session, lang, clock, problems, later, guard)
            except UnreadableFileError as exc:  # the answer itself needs the file (a confirm)
                log.warning("%s: %s", message.user_key, exc)
                reply = Reply(self._problem_text(message.user_key, exc, lang), error=True)
                await self._told(message, exc)  # said in the reply: not again as a notice
            except Exception as exc:  # a bug or a broken disk: one sentence, the trace logged
                log.exception("%s: the pipeline failed", message.user_key)
                reply = Reply(
                    say("disk_full" if is_disk_full(exc) else "failed", lang), error=True
                )
        # The session and the daily log are written: queue what they leave, then reply.
        await self._defer(message, later, clock)
        log.debug("%s: reply in %.1f ms", message.user_key, sum(ms for _, ms in clock.steps))
        notices: tuple[str, ...] = (
            (session_notice(session.kept_as, lang),) if session.kept_as else ()
        )
        for problem in problems:
            if await self._told(message, problem):
                notices += (self._problem_text(message.user_key, problem, lang),)
        return Reply(
            text=reply.text,
            proposals=reply.proposals,
            injected=reply.injected,
            error=reply.error,
            notices=notices + reply.notices,
            timings=tuple(clock.steps),
            reminders=reply.reminders,
        )

    def _problem_text(self, user_key: str, exc: UnreadableFileError, lang: str) -> str:
        root = self.view.memory.paths(user_key).root
        return file_problem_notice(exc, problem_topic(exc, root), lang)

    async def _told(self, message: IncomingMessage, exc: UnreadableFileError) -> bool:
        """Record that the user is told of ``exc`` now; False when they were told already."""
        if self.notices is None:
            return True
        topic = problem_topic(exc, self.view.memory.paths(message.user_key).root)
        return await asyncio.to_thread(
            self.notices.claim, message.user_key, topic, exc.stamp, message.time
        )

    async def _turn(
        self,
        message: IncomingMessage,
        session: Session,
        lang: str,
        clock: StepClock,
        problems: list[UnreadableFileError],
        later: list[Task],
        guard: StreamGuard | None = None,
    ) -> Reply:
        key = message.user_key
        # Step 2 (answering a proposal) is the bot layer's: only it can prove the user's act.
        with clock.step("3 append"):
            # Secrets are masked before anything is stored; only this turn's prompt sees them.
            stored, known = mask(message.text), self.said.of(session.id)
            log_it = self.daily_log.append_user_message
            write = partial(log_it, key, stored, message.time, message.message_id)
            if _cut_short(session, message):  # answered now after a stop cut it: kept once
                write = partial(self.daily_log.rel_path, message.time)
            else:
                session.append(ROLE_USER, stored, message.time, msg_id=message.message_id)
            # The daily log is written (disk) while the memories are looked up (CPU); the
            # model is asked only once it is written.
            log_write = asyncio.ensure_future(asyncio.to_thread(write))
        try:
            with clock.step("5 adaptive"):
                turns = session.user_turns
                search = not message.in_group and self.view.should_search(message.text, turns)
            with clock.step("6-7 select+budget"):
                try:
                    selection = await self._select(message, session, search)
                except UnreadableFileError as exc:  # answer without that user's memory file
                    log.warning("%s: answering without memories: %s", key, exc)
                    problems.append(exc)
                    selection = Selection()
            with clock.step("4 compaction"):
                # The threshold counts the head (with the pinned memories) + this turn's
                # memories + history.
                head = system_prompt(message.time, pinned_lines(selection))
                extra = self.counter.count(head) + self.counter.count(turn_block(selection))
                await self._compact(session, message, extra, later)
        finally:
            with clock.step("3 logged"):
                try:
                    later.append(index_task([await log_write]))
                except UnreadableFileError as exc:  # never rewrite a file we cannot read
                    log.warning("%s: not logged: %s", key, exc)
                    problems.append(exc)
        with clock.step("8 prompt"):
            messages = self._prompt(message, session, lang, selection)
            tools = TurnTools(
                key,
                message.time,
                lang,
                message.message_id,
                self.view.memory,
                self.confirm,
                self.governance,
                self.counter,
                self.reminders,
                user_text=message.text,
            )
            box = ToolBox({}) if message.in_group else tools.toolbox()
            keep_prompt(self.prompts, session, messages, box.schemas, later, self.history)
        with clock.step("9 llm"):
            try:
                resp = await ask(
                    self.llm,
                    messages,
                    box,
                    self.counter,
                    self.fit,
                    key,
                    self.max_tool_rounds,
                    guard,
                )
            except asyncio.CancelledError:
                # Stopped by the person (Ctrl-C in the terminal) while the reply was written:
                # what they saw of it is kept, marked as cut, so the next turn knows it.
                shown = guard.shown if guard is not None else ""
                if shown:
                    cut = f"{mask(shown, known)} {say('reply_cut', lang)}"
                    session.append(ROLE_ASSISTANT, cut, message.time)
                raise
            except LLMError as exc:
                log_llm_failure(log, key, exc)
                if isinstance(exc, LLMContextError):  # the next turn starts compacted
                    later += forced_compaction(self.compactor, self.work, session, message, later)
                self.why_log.record(key, (), message.time)  # no answer came from that prompt
                return Reply(
                    failure_reply(exc, lang),
                    proposals=tuple(proposal_view(p) for p in tools.proposals),
                    error=True,
                    reminders=tuple(tools.reminder_views),
                )
        text = resp.content.strip()
        if not message.in_group:  # a small model may skip memory_save or claim a false save
            text = await settle_reply(tools, box, message.text, text)
        # Only the answer goes into the session and the chat: never the memory block or tool
        # chatter, nor a secret the model repeated from the message.
        text = mask(text or say("tools_exhausted", lang), known)
        with clock.step("10 save reply"):
            session.append(ROLE_ASSISTANT, text, message.time)
        injected = injected_memories(selection)
        with clock.step("11 access+topics"):
            later += await asyncio.to_thread(self._after, key, message, selection, injected)
        return Reply(
            text=text,
            proposals=tuple(proposal_view(p) for p in tools.proposals),
            injected=injected,
            reminders=tuple(tools.reminder_views),
        )

    # -- steps -----------------------------------------------------------------------------
    async def _compact(
        self, session: Session, message: IncomingMessage, extra: int, later: list[Task]
    ) -> None:
        """Step 4: plan the compaction (the worker does it) and the per-message summaries.

        The line that tells the user comes once it is written: the worker queues it.
        """
        try:
            task = compaction_task(self.compactor, self.work, session, message, extra)
            later += [task] if task is not None else []
            await fill_summaries(session, self.message_summaries, self.history, upto=-1)
        except Exception:  # the turn goes on with the full history; the next turn retries
            log.exception("%s: compaction failed", message.user_key)

    def _start_query(self, message: IncomingMessage) -> None:
        """Start the search query's embedding and BM25 now, while the session is loaded.

        Only when the message alone already decides for a search (the turn count can add a
        periodic one, which then embeds in step 6): a greeting costs no embedding.
        """
        if self.ahead is None or message.in_group or not self.view.should_search(message.text, 0):
            return
        query = message.text[:MAX_QUERY_CHARS]
        self.ahead.start(query)
        # Its text half too, for as many hits as the view will ask for.
        self.view.memory.searcher.start_text(message.user_key, query, self.view.text_hits_wanted)

    async def _defer(self, message: IncomingMessage, later: list[Task], clock: StepClock) -> None:
        """Queue the turn's deferred work (after the session was saved) and wake the worker."""
        if later:
            with clock.step("12 queue"):
                await queue_tasks(self.work, message.user_key, later, message.time)

    async def _select(self, message: IncomingMessage, session: Session, search: bool) -> Selection:
        """Steps 6-7: layered candidates fitted to the budget."""
        if message.in_group:
            return Selection()  # memories are never shown in a group
        recent = " ".join(m.content for m in session.messages[-6:])
        history = history_window(session.messages, self.history)
        shown = shown_in_window(history.messages)
        # The user's earlier lines in the window are the search's context (agent.query).
        lines = [m.content for m in history.messages if m.role == ROLE_USER][:-1]
        room = summary_room(history, self.counter, self.history)  # what the note leaves
        select = partial(self.view.select, shown=shown, lines=lines, summary_tokens=room)
        return await asyncio.to_thread(
            select, message.user_key, message.text, recent, search, message.time
        )

    def _prompt(
        self, message: IncomingMessage, session: Session, lang: str, selection: Selection
    ) -> list[dict[str, object]]:
        """Step 8: the turn's messages for the model (docs/prompt.md)."""
        return turn_messages(
            now=message.time,
            language=lang,
            selection=selection,
            session=session,
            history=self.history,
            counter=self.counter,
            user_text=message.text,
            group=message.in_group,
        )

    def _after(
        self,
        key: str,
        message: IncomingMessage,
        selection: Selection,
        injected: Sequence[InjectedMemory],
    ) -> list[Task]:
        """Step 11: the /why record and access counts now; the section window later."""
        self.why_log.record(key, injected, message.time)
        ids = [
            s.candidate.id for s in selection.items if s.candidate.source.startswith("MEMORY.md §")
        ]
        # Once per conversation: what the bot injects must not keep itself injected.
        gap = timedelta(minutes=self.history.idle_summary_minutes)
        self.access.injected(key, ids, message.time, gap)
        if message.in_group:
            return []
        note_short_term(self.short_term, key, message)
        try:
            known = self.view.sections(key)
        except UnreadableFileError:  # already in this turn's problems (step 6-7)
            return []
        return [topics_task(selection, known, message.time)]


def _cut_short(session: Session, message: IncomingMessage) -> bool:
    """Whether a stop cut ``message``'s turn after it was kept (bot/telegram/queues.py)."""
    last = session.messages[-1] if session.messages else None
    same = last is not None and (last.role, last.id) == (ROLE_USER, message.message_id)
    return bool(message.message_id) and same
