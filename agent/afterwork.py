"""What the deferred-work worker does for one user: index, topic index, compaction.

Each kind is idempotent. Indexing compares unit hashes, so a file synced twice is indexed
once, and every file of a user's due rows is synced once, its new passages embedded in one
batch. A topic turn begun before a stop is recognised in ``index_state.json`` and not counted
twice. A compaction keeps the model's summary in its row once made, writes it under the
session's lock only while the session still begins with the planned messages (a /forget or
/new in between voids the plan), and finds its own log record again after a stop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from agent.deferred import (
    KIND_COMPACT,
    KIND_INDEX,
    KIND_TOPICS,
    TICK_SECONDS,
    DeferredWorker,
    Work,
    WorkQueue,
)
from agent.notices import NoticeBook
from agent.sections import SUMMARY_CHARS
from agent.summarizer import LastPrompts
from agent.turn.notes import compacted_line
from history.compaction import CompactionPlan, Compactor
from history.sessions import SessionStore, parse_time
from history.summarize import ConversationSummary
from history.topic_index import TopicIndex, iso_z
from memory.base.guards import mask
from memory.base.markdown import Entry
from memory.errors import UnreadableFileError
from memory.index.indexer import Indexer

log = logging.getLogger(__name__)
T = TypeVar("T")
# Runs a blocking call off the event loop: fn(*args) in some thread.
Heavy = Callable[..., Awaitable[Any]]


class AfterWork:
    """The handlers of the queue's kinds over the agent's services."""

    def __init__(
        self,
        queue: WorkQueue,
        indexer: Indexer,
        topics: TopicIndex,
        compactor: Compactor,
        sessions: SessionStore,
        notices: NoticeBook | None = None,
        warm: Callable[[str], object] | None = None,
        entries: Callable[[str], Mapping[str, Entry]] | None = None,
        prompts: LastPrompts | None = None,
    ) -> None:
        self.queue = queue
        self.prompts = prompts  # the prompts of the turns that planned a compaction
        self.notices = notices
        # Reads a user's changed MEMORY.md into the turn's cache (its section vectors too).
        self.warm = warm
        self.entries = entries  # a user's memories by id (the turn's cached parse)
        self.indexer = indexer
        self.topics = topics
        self.compactor = compactor
        self.sessions = sessions
        # Set by the worker: where CPU-heavy steps run (parsing, embedding: its low-priority
        # threads), whether a stop may cancel what runs now (the model's summary), and who
        # hands a user the notice just queued.
        self.heavy: Heavy = _in_thread
        self.on_cancellable: Callable[[bool], None] = lambda flag: None
        self.on_told: Callable[[str], Awaitable[None]] | None = None

    async def __call__(self, user_key: str, works: list[Work]) -> list[int]:
        """Do ``works`` (due rows of ``user_key``) in order; the seqs finished.

        The index rows are done together at the first of them: every file they name once,
        its new passages embedded in one batch. A row that fails stops the user's batch, so
        nothing of theirs overtakes it.
        """
        finished: list[int] = []
        index_rows = [w for w in works if w.kind == KIND_INDEX]
        for work in works:
            if work.kind == KIND_INDEX:
                if work is not index_rows[0]:
                    continue  # done with the first
                files = [f for w in index_rows for f in w.payload.get("files", [])]
                step = self._index(user_key, list(dict.fromkeys(files)))
                rows = index_rows
            elif work.kind == KIND_TOPICS:
                step, rows = self._topics(user_key, work), [work]
            elif work.kind == KIND_COMPACT:
                step, rows = self._compact(user_key, work), [work]
            else:  # written by a newer version: nothing here knows how to do it
                log.warning("%s: deferred work of unknown kind %r dropped", user_key, work.kind)
                step, rows = _nothing(), [work]
            if not await self._guard(work, step, rows):
                return finished
            finished += [w.seq for w in rows]
        return finished

    async def _guard(self, work: Work, step: Awaitable[None], rows: list[Work]) -> bool:
        """Run one step; on success its rows are deleted, on failure retried later."""
        try:
            await step
        except UnreadableFileError as exc:  # told to the user by the index job; no retry
            log.warning("%s: deferred %s skipped: %s", work.user_key, work.kind, exc)
        except Exception as exc:
            log.warning("%s: deferred %s failed: %s", work.user_key, work.kind, exc, exc_info=True)
            await asyncio.to_thread(self.queue.failed, work, f"{type(exc).__name__}: {exc}")
            return False
        await asyncio.to_thread(self.queue.done, [w.seq for w in rows])
        return True

    # -- the kinds -------------------------------------------------------------------------
    async def _index(self, user_key: str, files: list[str]) -> None:
        for rel in files:
            await self.heavy(self.indexer.sync_file, user_key, rel)
        if self.warm is None:
            return
        try:  # a memory confirmed or edited in the turn: parsed and described here
            await self.heavy(self.warm, user_key)
        except Exception as exc:  # only a head start: the turn parses it then, as before
            log.info("%s: MEMORY.md not prepared ahead of the turn: %s", user_key, exc)

    async def _topics(self, user_key: str, work: Work) -> None:
        p = work.payload
        when = parse_time(str(p.get("time", "")))
        sections = [str(s) for s in p.get("sections", [])]
        known = [str(s) for s in p.get("known", [])]
        raw = p.get("entries")
        ids = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        summaries = await self.heavy(self._summaries, user_key, ids)
        if work.attempts and await asyncio.to_thread(self._recorded, user_key, sections, when):
            return  # the stop came after the turn was written, before its row was deleted
        await asyncio.to_thread(
            self.topics.record, user_key, sections, when, known, summaries=summaries
        )

    def _summaries(self, user_key: str, ids: dict[str, str]) -> dict[str, str]:
        """Section -> the one line of the memory ``ids`` names (gone ones are left out)."""
        if not ids or self.entries is None:
            return {}
        try:
            by_id = self.entries(user_key)
        except UnreadableFileError:
            return {}
        return {
            section: " ".join((by_id[i].summary or by_id[i].text).split())[:SUMMARY_CHARS]
            for section, i in ids.items()
            if i in by_id
        }

    def _recorded(self, user_key: str, sections: list[str], when: datetime) -> bool:
        state = self.topics.load(user_key)
        if state is None or not state.turns:
            return False
        last = state.turns[-1]
        hit = tuple(dict.fromkeys(mask(s) for s in sections if s))
        return last.ts == iso_z(when) and last.sections_hit == hit

    async def _compact(self, user_key: str, work: Work) -> None:
        p = dict(work.payload)
        plan = CompactionPlan(int(p.get("count", 0)), str(p.get("digest", "")))
        when = parse_time(str(p.get("time", "")))
        summary = _summary(p.get("summary"))
        kept = self.prompts.take(user_key) if self.prompts is not None else None
        if summary is None:
            async with self.sessions.locked(user_key) as session:
                older = self.compactor.planned(session, plan)
                previous = self.compactor.previous_note(session)
            if older is None:
                return  # the session changed (/new, /forget, a compaction done): plan void
            extra: dict[str, Any] = {}
            if kept is not None:  # after the turn's own prompt: the server reuses its prefix
                unseen = min(len(older), kept.first_shown)
                extra = {"context": kept.messages, "tools": kept.tools, "unseen": unseen}
            self.on_cancellable(True)
            try:
                summary = await self.compactor.summaries.conversation_summary(
                    older, previous, **extra
                )
            finally:
                self.on_cancellable(False)
            p["summary"] = {"body": summary.body, "gist": summary.gist}
            await asyncio.to_thread(self.queue.save_payload, work.seq, p)
        async with self.sessions.locked(user_key) as session:
            result = await self.compactor.apply(session, user_key, when, plan, summary)
        if result is not None and result.keywords and self.warm is not None:
            # The keywords rewrote MEMORY.md: parse it here, not in the user's next turn.
            await self.heavy(self.warm, user_key)
        if result is None:
            log.info("%s: the planned compaction no longer matches the session", user_key)
        elif self.notices is not None:  # compaction's one line, now that it is true; once
            line = compacted_line(result, str(p.get("lang") or "zh"))
            queued = await asyncio.to_thread(
                self.notices.queue_batch, plan.ref, [(user_key, line)], datetime.now(UTC)
            )
            if queued and self.on_told is not None:
                try:
                    await self.on_told(user_key)
                except Exception:  # still in the outbox: the minute job delivers it
                    log.warning("%s: the compaction line waits for the next tick", user_key)
        # Also after a stop between the writes and the row's deletion: syncing twice is free.
        await self._index(user_key, self.compactor.written_paths(when))


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.to_thread(fn, *args)


async def _nothing() -> None:
    return None


def _summary(raw: object) -> ConversationSummary | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("body"), str):
        return None
    return ConversationSummary(body=str(raw["body"]), gist=str(raw.get("gist", "")))


def build_worker(
    queue: WorkQueue,
    indexer: Indexer,
    topics: TopicIndex,
    compactor: Compactor,
    sessions: SessionStore,
    *,
    notices: NoticeBook | None = None,
    warm: Callable[[str], object] | None = None,
    entries: Callable[[str], Mapping[str, Entry]] | None = None,
    owns: Callable[[str], bool] | None = None,
    tick: float = TICK_SECONDS,
    prompts: LastPrompts | None = None,
) -> DeferredWorker:
    """The worker over these services (``owns``: the users its front end serves)."""
    after = AfterWork(queue, indexer, topics, compactor, sessions, notices, warm, entries, prompts)
    worker = DeferredWorker(queue, after, owns=owns, tick=tick)
    after.on_cancellable = worker.cancellable
    after.heavy = worker.background

    async def told(user_key: str) -> None:
        if worker.told is not None:
            await worker.told(user_key)

    after.on_told = told
    return worker
