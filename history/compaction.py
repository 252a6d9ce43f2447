"""Automatic compaction: summarise, write to Markdown, keep the summary and the last N turns.

Before each LLM call the agent asks :meth:`Compactor.maybe_compact`. When the estimated
prompt (system text + the session's history) reaches ``auto_write_threshold_tokens`` (10,000)
or the session holds ``auto_write_threshold_turns`` (15) user turns, the older history is
summarised (topic, decisions, todos, numbers, names, dates; chit-chat in one line), the
summary is appended to ``MEMORY_FULL.md`` under ``## 對話摘要 (YYYY-MM-DD)`` and to the daily
log, both are indexed, and the session keeps one note pointing at those files plus the last
``history_turns_after`` (5) user turns. The conversation's keywords that the summary names and
MEMORY.md's keyword index lacks are added to it ("有資料才設索引": only words the written
summary holds), and :attr:`CompactionResult.keywords` says which, for the one line that tells
the user (docs/conversations.md, "Compaction").

The agent defers this work (docs/architecture.md, "Work that can wait"): during the turn it
only takes a :class:`CompactionPlan` (how many of the oldest messages to summarise, and their
digest); the background worker summarises them with the model, writes both files and trims
the session under the session's lock, in that order, after checking that the session still
begins with exactly those messages. ``/new`` and :meth:`Compactor.maybe_compact` still do it
all at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from history import extractive as ex
from history.compaction_note import MESSAGE_OVERHEAD_TOKENS, note_limit, note_text

# Importers of the note's marker (tests, benches) find it here, beside the compactor.
from history.compaction_note import NOTE_PREFIX as NOTE_PREFIX
from history.config import HistoryConfig
from history.conversation_summary import ConversationSummary
from history.dailylog import DailyLog
from history.sessions import KIND_COMPACTION, ROLE_SYSTEM, ROLE_USER, Message, Session
from history.summarize import SummaryService
from memory.base.fsutil import atomic_write_text, read_text
from memory.base.guards import REDACTED, mask
from memory.base.locks import user_lock
from memory.base.logs import parse_log
from memory.base.markdown import parse_memory, render_memory
from memory.base.tokens import TokenCounter
from memory.base.users import UserPaths
from memory.errors import UnreadableFileError

log = logging.getLogger(__name__)

FULL_TITLE = "# MEMORY_FULL — 對話摘要 (conversation summaries)\n"
KEYWORDS_PER_SUMMARY = 5

# Called with (user_key, path relative to the user's folder) after a file was written.
IndexCallback = Callable[[str, str], object]


@dataclass(frozen=True, slots=True)
class CompactionCheck:
    """Whether the session has reached a threshold, and the figures behind it."""

    prompt_tokens: int
    user_turns: int
    reason: str  # "tokens", "turns" or "" (not triggered)

    @property
    def triggered(self) -> bool:
        """True when compaction should run now."""
        return bool(self.reason)


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """What one compaction did."""

    summary: ConversationSummary
    heading: str  # "對話摘要 (YYYY-MM-DD)"
    log_path: str  # memory/YYYY-MM-DD.md
    removed: int  # messages replaced by the note
    tokens_before: int
    tokens_after: int
    keywords: tuple[str, ...] = ()  # added to MEMORY.md's keyword index by this compaction


def summary_keywords(messages: Sequence[Message], summary: ConversationSummary) -> list[str]:
    """The conversation's keywords that its written summary names (masked text only)."""
    talk = [
        m.content for m in messages if m.kind != KIND_COMPACTION and not ex.is_chitchat(m.content)
    ]
    body = summary.body.lower()
    out = []
    for word in ex.keywords(talk, KEYWORDS_PER_SUMMARY * 3):
        word = mask(word)
        if word.lower() in body and REDACTED[1:-1] not in word:
            out.append(word)
    return out[:KEYWORDS_PER_SUMMARY]


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """The oldest messages a deferred compaction summarises: how many, and what they said."""

    count: int  # the first ``count`` messages other than compaction notes
    digest: str  # of those messages as the session file holds them (see :func:`body_digest`)

    @property
    def ref(self) -> str:
        """The daily-log ref of this compaction's summary record (found again on a retry)."""
        return f"compaction-{self.digest[:16]}"


def body_digest(session: Session, count: int) -> str:
    """A digest of the first ``count`` non-note messages, as the session file stores them.

    Per-message summaries (filled in later) are left out; any change to a message's text,
    role, time or id (a /forget redaction, a /new) changes the digest.
    """
    rows = [m for m in session.to_json()["messages"] if m.get("kind") != KIND_COMPACTION]
    for row in rows:
        row.pop("summary", None)
    blob = json.dumps(rows[:count], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def find_split(messages: Sequence[Message], keep_turns: int) -> int:
    """Index of the first message kept so that the last ``keep_turns`` user turns remain."""
    seen = 0
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == ROLE_USER:
            seen += 1
            if seen == keep_turns:
                return i
    return 0


class Compactor:
    """Runs the check-summarise-write-trim step on a session."""

    def __init__(
        self,
        data_dir: Path,
        summaries: SummaryService,
        counter: TokenCounter,
        config: HistoryConfig,
        daily_log: DailyLog,
        on_written: IndexCallback | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.summaries = summaries
        self.counter = counter
        self.config = config
        self.daily_log = daily_log
        self.on_written = on_written

    def history_tokens(self, messages: Sequence[Message]) -> int:
        """Estimated tokens of sending ``messages`` as chat history."""
        return sum(self.counter.count(m.content) + MESSAGE_OVERHEAD_TOKENS for m in messages)

    def check(self, session: Session, extra_tokens: int = 0) -> CompactionCheck:
        """Tokens (system + history) >= threshold, or user turns >= threshold.

        ``extra_tokens`` is what the prompt holds besides the history (system text, memory).
        """
        tokens = extra_tokens + self.history_tokens(session.messages)
        turns = session.user_turns
        reason = ""
        if tokens >= self.config.auto_write_threshold_tokens:
            reason = "tokens"
        elif turns >= self.config.auto_write_threshold_turns:
            reason = "turns"
        return CompactionCheck(tokens, turns, reason)

    async def maybe_compact(
        self, session: Session, user_key: str, now: datetime, extra_tokens: int = 0
    ) -> CompactionResult | None:
        """Compact the session if it reached a threshold; None when nothing was done."""
        checked = self.check(session, extra_tokens)
        if not checked.triggered:
            return None
        log.info(
            "compacting %s (%s: %d tokens, %d turns)",
            session.id,
            checked.reason,
            checked.prompt_tokens,
            checked.user_turns,
        )
        return await self.compact(session, user_key, now, extra_tokens)

    def _split(self, session: Session, extra_tokens: int) -> tuple[list[Message], list[Message]]:
        body = [m for m in session.messages if m.kind != KIND_COMPACTION]
        keep_turns = max(1, self.config.history_turns_after)
        split = find_split(body, keep_turns)
        # A few huge messages can exceed the threshold on their own: keep fewer turns then.
        while (
            keep_turns > 1
            and extra_tokens + self.history_tokens(body[split:])
            >= self.config.auto_write_threshold_tokens
        ):
            keep_turns -= 1
            split = find_split(body, keep_turns)
        return body[:split], body[split:]

    async def compact(
        self, session: Session, user_key: str, now: datetime, extra_tokens: int = 0
    ) -> CompactionResult | None:
        """Summarise the older history, write it down, and trim the session (in place)."""
        older, kept = self._split(session, extra_tokens)
        return await self._summarise(session, user_key, now, older, kept)

    def plan(self, session: Session, extra_tokens: int = 0) -> CompactionPlan | None:
        """The plan of the compaction the session needs now; None below the thresholds."""
        if not self.check(session, extra_tokens).triggered:
            return None
        older, _ = self._split(session, extra_tokens)
        if not older:
            return None
        return CompactionPlan(len(older), body_digest(session, len(older)))

    def planned(self, session: Session, plan: CompactionPlan) -> list[Message] | None:
        """The messages ``plan`` names, if the session still begins with exactly them."""
        body = [m for m in session.messages if m.kind != KIND_COMPACTION]
        if plan.count <= 0 or len(body) < plan.count:
            return None
        if body_digest(session, plan.count) != plan.digest:
            return None
        return body[: plan.count]

    @staticmethod
    def previous_note(session: Session) -> str:
        """The latest compaction note's text ("" when the session has none)."""
        notes = [m for m in session.messages if m.kind == KIND_COMPACTION]
        return notes[-1].content if notes else ""

    async def apply(
        self,
        session: Session,
        user_key: str,
        now: datetime,
        plan: CompactionPlan,
        summary: ConversationSummary,
    ) -> CompactionResult | None:
        """Write ``summary`` of the planned messages, then trim them from the session.

        None (nothing written) when the session no longer begins with those messages. The
        caller holds the session's lock and indexes :meth:`written_paths` afterwards.
        """
        older = self.planned(session, plan)
        if older is None:
            return None
        body = [m for m in session.messages if m.kind != KIND_COMPACTION]
        return await self._finish(
            session, user_key, now, older, body[plan.count :], summary, plan.ref
        )

    def written_paths(self, now: datetime) -> list[str]:
        """The files a compaction at ``now`` writes (relative to the user's folder)."""
        return ["MEMORY_FULL.md", self.daily_log.rel_path(now), "MEMORY.md"]

    async def summarise_all(
        self, session: Session, user_key: str, now: datetime
    ) -> CompactionResult | None:
        """``/new``: summarise the whole conversation, write it down, and empty the session."""
        older = [m for m in session.messages if m.kind != KIND_COMPACTION]
        result = await self._summarise(session, user_key, now, older, [])
        session.messages = []
        return result

    async def _summarise(
        self,
        session: Session,
        user_key: str,
        now: datetime,
        older: list[Message],
        kept: list[Message],
    ) -> CompactionResult | None:
        if not older:
            return None
        summary = await self.summaries.conversation_summary(
            older, previous=self.previous_note(session)
        )
        result = await self._finish(session, user_key, now, older, kept, summary)
        await self._index(user_key, ["MEMORY_FULL.md", result.log_path])
        return result

    async def _finish(
        self,
        session: Session,
        user_key: str,
        now: datetime,
        older: list[Message],
        kept: list[Message],
        summary: ConversationSummary,
        ref: str = "",
    ) -> CompactionResult:
        """Write the summary to both files, and only then trim: nothing is lost if we stop."""
        notes = [m for m in session.messages if m.kind == KIND_COMPACTION]
        tokens_before = self.history_tokens(session.messages)
        day = f"{self.daily_log.local(now):%Y-%m-%d}"
        heading = f"對話摘要 ({day})"
        log_rel = await asyncio.to_thread(self._write, user_key, heading, summary, now, ref)
        pointer = f"MEMORY_FULL.md § {heading}、{log_rel}"
        limit = note_limit(self.config)
        text = note_text(summary.gist, pointer, self.counter, limit, earlier=bool(notes))
        note = Message(ROLE_SYSTEM, text, now, kind=KIND_COMPACTION)
        session.messages = [note, *kept]
        session.window_from = len(kept)  # the prompt's window is rebuilt at the trim
        session.compactions += 1
        words = summary_keywords(older, summary)
        added = await asyncio.to_thread(self.add_keywords, user_key, words)
        return CompactionResult(
            summary=summary,
            heading=heading,
            log_path=log_rel,
            removed=len(older) + len(notes),
            tokens_before=tokens_before,
            tokens_after=self.history_tokens(session.messages),
            keywords=added,
        )

    def add_keywords(self, user_key: str, words: Sequence[str]) -> tuple[str, ...]:
        """Add the words MEMORY.md's keyword index lacks; returns those added.

        A MEMORY.md that cannot be read is left alone (the summary is written all the same).
        """
        if not words:
            return ()
        path = UserPaths.of(self.data_dir, user_key).memory_md
        with user_lock(self.data_dir, user_key):
            try:
                doc = parse_memory(read_text(path))
            except UnreadableFileError as exc:
                log.warning("%s: keyword index not updated: %s", user_key, exc)
                return ()
            grown = doc.with_keywords(words)
            added = tuple(k for k in grown.keywords if k not in doc.keywords)
            if added:
                atomic_write_text(path, render_memory(grown))
        return added

    def _write(
        self,
        user_key: str,
        heading: str,
        summary: ConversationSummary,
        now: datetime,
        ref: str = "",
    ) -> str:
        """Append the block to MEMORY_FULL.md and a record to the daily log, each once.

        With ``ref`` (a deferred compaction) a retry after a crash between the two writes
        adds the log record it missed; without one, a block already there means both were
        written before a crash kept the trimmed session from being saved.
        """
        path = UserPaths.of(self.data_dir, user_key).memory_full_md
        block = f"\n## {heading}\n\n{mask(summary.body)}\n"
        log_rel = self.daily_log.rel_path(now)
        with user_lock(self.data_dir, user_key):
            current = read_text(path) or FULL_TITLE
            if block in current:
                if not ref or self._logged(user_key, now, ref):
                    return log_rel
            else:
                if not current.endswith("\n"):
                    current += "\n"
                atomic_write_text(path, current + block)
            return self.daily_log.append(
                user_key,
                "summary",
                f"本段討論摘要：{summary.gist}（詳見 MEMORY_FULL.md § {heading}）",
                now,
                ref,
            )

    def _logged(self, user_key: str, now: datetime, ref: str) -> bool:
        day = f"{self.daily_log.local(now):%Y-%m-%d}"
        text = read_text(UserPaths.of(self.data_dir, user_key).daily_log(day))
        return any(r.ref == ref for r in parse_log(day, text))

    async def _index(self, user_key: str, rels: list[str]) -> None:
        if self.on_written is None:
            return
        for rel in rels:
            try:
                await asyncio.to_thread(self.on_written, user_key, rel)
            except Exception:  # the indexing job retries later; the summary is on disk
                log.exception(
                    "indexing %s of %s failed; the next indexing job retries", rel, user_key
                )
