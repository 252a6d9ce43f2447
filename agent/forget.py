"""/forget and /undo (docs/memory-lifecycle.md, "Forget"): delete a memory, redact its text.

``forget`` deletes the entry (and the versions it replaced) from MEMORY.md and the index,
keeping one undo copy in ``pcai.db``; then it redacts what the memory said, and the message it
came from, out of the user's daily logs, summaries, MEMORY.md's keyword index, session, pending
proposals, short-term rows and /why record, re-indexes the files it changed, and scrubs both
databases so no deleted text stays readable in them. ``undo`` puts the entries back within
the window (the redactions stay); the expiry job drops the copies after it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from datetime import datetime

from agent.texts import say
from agent.why import WhyLog
from history.config import TopicIndexConfig
from history.dailylog import DailyLog
from history.redact import Redactor, redact_log, redact_session, redact_summaries, said_in_log
from history.sessions import SessionStore
from history.topic_index import TopicIndex
from memory.base.fsutil import read_text
from memory.base.guards import FORGOTTEN
from memory.base.logs import safe_ref
from memory.base.markdown import Entry
from memory.base.users import day_files
from memory.errors import CorruptFileError, EntryNotFoundError
from memory.state.short_term import ShortTermStore
from memory.state.undo import UndoStore
from memory.state.usage import AccessCounter
from memory.write.governance import LIVE, Governance
from memory.write.pending import PendingStore

log = logging.getLogger(__name__)

_CHAT_SOURCE = "chat:"  # a proposal the model made during the user's message <id>


@dataclass(frozen=True, slots=True)
class Said:
    """What to tell the user after /forget or /undo."""

    text: str
    error: bool = False


@dataclass(frozen=True, slots=True)
class Stores:
    """The rows in ``pcai.db`` that can hold a memory's text."""

    pending: PendingStore
    short_term: ShortTermStore
    why: WhyLog
    access: AccessCounter


class Forgetter:
    """Forget, undo and the undo copies' expiry for every user."""

    def __init__(
        self,
        governance: Governance,
        undo: UndoStore,
        stores: Stores,
        sessions: SessionStore,
        daily_log: DailyLog,
    ) -> None:
        self.governance = governance
        self.memory = governance.memory
        self.undo_store = undo
        self.stores = stores
        self.sessions = sessions
        self.daily_log = daily_log

    @property
    def minutes(self) -> int:
        """How long an undo copy is kept."""
        return int(self.undo_store.window.total_seconds() // 60)

    async def forget(
        self, user_key: str, entry_id: str, *, now: datetime, lang: str = "en"
    ) -> Said:
        """Forget one memory of ``user_key`` (and what it replaced) and redact its text.

        The text is redacted first and the entry deleted last: when a file cannot be read,
        the entry stays, so the user can fix the file and say /forget again.
        """
        try:
            doomed = await asyncio.to_thread(self.governance.to_forget, user_key, entry_id)
        except EntryNotFoundError:
            return Said(say("forget_missing", lang, entry_id=entry_id), error=True)
        changed, unreadable = await self.redact(user_key, doomed)
        if unreadable:
            await asyncio.to_thread(self._reindex, user_key, changed)
            names = ", ".join(unreadable)
            return Said(
                say("forget_unreadable", lang, entry_id=entry_id, names=names),
                error=True,
            )
        try:
            gone = await asyncio.to_thread(
                self.governance.forget,
                user_key,
                entry_id,
                keep=lambda entries: self.undo_store.keep(user_key, entries, now),
            )
        except EntryNotFoundError:  # forgotten meanwhile (a second /forget racing this one)
            return Said(say("forget_missing", lang, entry_id=entry_id), error=True)
        await asyncio.to_thread(self._reindex, user_key, changed)
        older = len(gone) - 1
        also_key = "forgot_also_many" if older > 1 else "forgot_also_one"
        said = say(
            "forgot",
            lang,
            entry_id=entry_id,
            also=say(also_key, lang, n=older) if older else "",
            marker=FORGOTTEN,
            minutes=self.minutes,
        )
        return Said(said)

    async def undo(self, user_key: str, *, now: datetime, lang: str = "en") -> Said:
        """Put back what the user's latest /forget removed, if its window is still open."""
        copy = await asyncio.to_thread(self.undo_store.latest, user_key)
        if copy is None or copy.expires_at <= now:
            return Said(say("undo_nothing", lang, minutes=self.minutes), error=True)
        await asyncio.to_thread(self.governance.put_back, user_key, copy.entries)
        await asyncio.to_thread(self.undo_store.drop, copy.id)
        shown = copy.entries[-1].id
        return Said(say("undo_restored", lang, entry_id=shown))

    def expire(self, now: datetime, user_key: str | None = None) -> int:
        """The job: drop undo copies past their window (``user_key``'s only if given)."""
        copies = self.undo_store.drop_expired(now, user_key)
        for copy in copies:
            present = {e.id for e in self.memory.entries(copy.user_key)}
            for e in copy.entries:
                if e.id not in present:
                    self.stores.access.forget(copy.user_key, e.id)
        return len(copies)

    # -- redaction -------------------------------------------------------------------------
    async def redact(self, user_key: str, gone: list[Entry]) -> tuple[list[str], list[str]]:
        """Redact the text of ``gone`` from every file and row of the user.

        Returns the files changed (to re-index) and those that could not be read.
        """
        ids = frozenset(e.id for e in gone)
        sources = await asyncio.to_thread(self.stores.pending.sources, user_key, ids)
        message_ids = frozenset(
            s.removeprefix(_CHAT_SOURCE) for s in sources if s.startswith(_CHAT_SOURCE)
        )
        refs = frozenset(safe_ref(m) for m in message_ids)
        # The session stays locked throughout, so a turn cannot write the text back meanwhile.
        async with self.sessions.locked(user_key) as session:
            said = [m.content for m in session.messages if m.id and m.id in message_ids]
            said += await asyncio.to_thread(self._said_in_logs, user_key, refs)
            kept = [
                e.text
                for e in self.memory.entries(user_key)
                if e.status in LIVE and e.id not in ids
            ]
            texts = [t for e in gone for t in (e.text, e.summary)]
            redactor = Redactor([*texts, *said], kept)
            redact_session(session, redactor, message_ids)
            changed, unreadable = await asyncio.to_thread(
                self._redact_files, user_key, redactor, refs
            )
        await asyncio.to_thread(self._redact_rows, user_key, redactor, ids)
        return changed, unreadable

    def _said_in_logs(self, user_key: str, refs: frozenset[str]) -> list[str]:
        said: list[str] = []
        for f in day_files(self.memory.paths(user_key)) if refs else []:
            try:
                said += said_in_log(f.stem, read_text(f), refs)
            except CorruptFileError:
                continue  # reported by the redaction that follows
        return said

    def _redact_files(
        self, user_key: str, redactor: Redactor, refs: frozenset[str]
    ) -> tuple[list[str], list[str]]:
        changed, unreadable = self.daily_log.rewrite(
            user_key, lambda day, text: redact_log(day, text, redactor, refs)
        )
        paths = self.memory.paths(user_key)
        for rel, path in (
            ("MEMORY_FULL.md", paths.memory_full_md),
            ("auto_summaries.md", paths.auto_summaries_md),
        ):
            try:
                if redact_summaries(path, redactor):
                    changed.append(rel)
            except CorruptFileError:
                unreadable.append(rel)
        # MEMORY_TOPIC.md's summary may quote the memory (it is not indexed: nothing to sync).
        TopicIndex(self.memory.data_dir, TopicIndexConfig()).redact(user_key, redactor)
        try:
            self._redact_keywords(user_key, redactor)
        except CorruptFileError:
            unreadable.append("MEMORY.md")
        return changed, unreadable

    def _redact_keywords(self, user_key: str, redactor: Redactor) -> None:
        """Drop the keywords of MEMORY.md's index that name what is forgotten."""
        terms = {t.lower() for t in redactor.terms}
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            kept = tuple(k for k in doc.keywords if k.lower() not in terms and redactor(k) == k)
            if kept != doc.keywords:
                self.memory.write_document(user_key, replace(doc, keywords=kept), index=False)

    def _redact_rows(self, user_key: str, redactor: Redactor, ids: frozenset[str]) -> None:
        self.stores.pending.redact(user_key, redactor, ids, FORGOTTEN)
        self.stores.short_term.redact(user_key, redactor)
        self.stores.why.redact(user_key, redactor, ids, FORGOTTEN)
        self.undo_store.checkpoint()

    def _reindex(self, user_key: str, changed: list[str]) -> None:
        for rel in changed:
            self.memory.indexer.sync_file(user_key, rel, force=True)
        self.memory.indexer.store.scrub()
        log.info("forget for %s: %d files redacted", user_key, len(changed))
