"""Idle summaries: a session quiet for over 60 minutes gets one summary.

The summary (a few sentences and 3-5 keywords) is appended to ``users/<key>/auto_summaries.md``
as a ``## 閒置摘要 (start – end)`` block (:mod:`memory.base.spans`), which the indexer reads like
any summary block and search uses to lift the records it covers. The
session records the end of the stretch it summarised (``idle_summarized_through``), so the
same stretch is never summarised twice; the heading names the stretch too, so a crash between
writing the file and saving the session does not write it twice either.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

from history.compaction import IndexCallback
from history.config import HistoryConfig
from history.sessions import (
    KIND_COMPACTION,
    ROLE_SYSTEM,
    Message,
    Session,
    SessionStore,
    is_group_session,
)
from history.summarize import IdleSummary, SummaryService
from memory.base.fsutil import atomic_write_text, read_text
from memory.base.guards import REDACTED, mask
from memory.base.locks import user_lock
from memory.base.spans import idle_heading
from memory.base.users import UserPaths, check_user_key
from memory.errors import InvalidUserKeyError

log = logging.getLogger(__name__)

AUTO_TITLE = "# 自動歸納 (idle-session summaries)\n"
AUTO_REL = "auto_summaries.md"


@dataclass(frozen=True, slots=True)
class IdleResult:
    """One idle summary that was written."""

    session_id: str
    heading: str
    summary: IdleSummary
    messages: int


def idle_stretch(session: Session, now: datetime, idle: timedelta) -> list[Message]:
    """The messages not yet summarised, if the session has been quiet for ``idle``; else []."""
    through = session.idle_summarized_through
    stretch = [
        m
        for m in session.messages
        if m.kind != KIND_COMPACTION
        and m.role != ROLE_SYSTEM
        and (through is None or m.time > through)
    ]
    if not stretch or now - max(m.time for m in stretch) < idle:
        return []
    return stretch


class IdleSummaries:
    """Finds idle sessions and writes their summaries."""

    def __init__(
        self,
        store: SessionStore,
        data_dir: Path,
        summaries: SummaryService,
        config: HistoryConfig,
        tz: tzinfo | None = None,
        on_written: IndexCallback | None = None,
    ) -> None:
        self.store = store
        self.data_dir = data_dir
        self.summaries = summaries
        self.config = config
        self.tz = tz
        self.on_written = on_written

    @property
    def idle(self) -> timedelta:
        """How long a session must be quiet (``idle_summary_minutes``, 60)."""
        return timedelta(minutes=self.config.idle_summary_minutes)

    async def run(self, now: datetime) -> list[IdleResult]:
        """Summarise every session that is idle and has an unsummarised stretch."""
        results = []
        for session_id in await asyncio.to_thread(self.store.session_ids):
            if is_group_session(session_id):
                continue  # a group's talk is nobody's memory: no summary, no user file
            try:
                user_key = check_user_key(session_id)
            except InvalidUserKeyError:
                continue  # not a user's session (e.g. a hand-made file): nothing to attach it to
            try:
                made = await self.summarize_session(session_id, user_key, now)
            except Exception:  # one broken session must not stop the others
                log.exception("idle summary of %s failed", session_id)
                continue
            if made:
                results.append(made)
        return results

    async def summarize_session(
        self, session_id: str, user_key: str, now: datetime
    ) -> IdleResult | None:
        """Summarise one session's idle stretch, if it has one."""
        # Summarise outside the lock: the model may be slow, and the user may write meanwhile.
        snapshot = await asyncio.to_thread(self.store.load, session_id)
        stretch = idle_stretch(snapshot, now, self.idle)
        if not stretch:
            return None
        end = max(m.time for m in stretch)
        summary = await self.summaries.idle_summary(
            stretch, self.config.idle_keywords_min, self.config.idle_keywords_max
        )
        start = min(m.time for m in stretch)
        heading = idle_heading(start.astimezone(self.tz), end.astimezone(self.tz))
        async with self.store.locked(session_id) as session:
            done = session.idle_summarized_through
            if done is not None and done >= end:
                return None  # another run got here first
            await asyncio.to_thread(write_idle_summary, self.data_dir, user_key, heading, summary)
            session.idle_summarized_through = end
        if self.on_written is not None:
            try:
                await asyncio.to_thread(self.on_written, user_key, AUTO_REL)
            except Exception:
                log.exception("indexing the idle summary of %s failed; retried later", user_key)
        # No keyword or summary text in the log: it is the user's words.
        log.debug("idle summary for %s: %d keywords", session_id, len(summary.keywords))
        return IdleResult(session_id, heading, summary, len(stretch))


def write_idle_summary(data_dir: Path, user_key: str, heading: str, summary: IdleSummary) -> None:
    """Append one idle summary block to the user's auto_summaries.md, once per heading."""
    path = UserPaths.of(data_dir, user_key).auto_summaries_md
    with user_lock(data_dir, user_key):
        current = read_text(path) or AUTO_TITLE
        if f"## {heading}\n" in current:
            return  # written before a crash that kept the session from recording it
        if not current.endswith("\n"):
            current += "\n"
        keywords = [mask(k) for k in summary.keywords]
        block = (
            f"\n## {heading}\n\n- 摘要：{mask(summary.summary)}\n"
            f"- 關鍵字：{'、'.join(k for k in keywords if REDACTED[1:-1] not in k)}\n"
        )
        atomic_write_text(path, current + block)
