"""/forget and /undo (docs/memory-lifecycle.md, "Forget"): delete a memory and its copies.

``forget`` blanks the copies of what the memory said (the rule is :mod:`history.redact`'s), and
the message it came from, in the user's daily logs, summaries, MEMORY.md's keyword index,
topic line, session, pending proposals (one still waiting that held a copy is taken back: it
would make a memory of the forgotten one), short-term rows and /why records; then it deletes the
entry (and the versions it replaced) from MEMORY.md and the index, keeping one undo copy in
``pcai.db`` with the journal of every unit it changed; it re-indexes the files it changed and
scrubs both databases so no deleted text stays readable in them. ``undo`` puts the entries
and every unit still as forget left it back within the window; the expiry job drops the
copies after it.

``/undo`` also takes back what a typed ``/remember`` or ``/remind`` did at once (the command
is the user's own act, so it does not ask again): :meth:`Forgetter.note_made` notes it in the
same undo table and window, and :meth:`Forgetter.undo` forgets that memory (every copy, and no
undo copy kept) or cancels that reminder.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from agent.reminders.errors import ReminderError
from agent.reminders.texts import when_text
from agent.reminders.types import Reminder
from agent.texts import say
from agent.why import WhyLog
from history.config import TopicIndexConfig
from history.dailylog import DailyLog
from history.redact import (
    Journal,
    Redactor,
    put_back,
    redact_log,
    redact_session,
    redact_summaries,
    restore_log,
    restore_session,
    restore_summaries,
    said_in_log,
)
from history.sessions import SessionStore
from history.topic_index import TopicIndex
from memory.base.fsutil import read_text
from memory.base.guards import FORGOTTEN
from memory.base.logs import safe_ref
from memory.base.markdown import Entry
from memory.base.users import day_files
from memory.errors import CorruptFileError, EntryNotFoundError
from memory.state.short_term import ShortTermStore
from memory.state.undo import UndoCopy, UndoStore
from memory.state.usage import AccessCounter
from memory.write.governance import LIVE, Governance
from memory.write.pending import PendingStore

log = logging.getLogger(__name__)

# The acts a change row can name (memory/write/curation.py); another is "a change".
_ACTS = frozenset({"revise", "pin", "unpin", "scope", "keep", "restore", "confirm"})
_SHOWN = 60  # characters of a memory's text that name an act


def _short(text: str) -> str:
    """A memory's text short enough to name an act in one line."""
    line = " ".join(text.split())
    return line if len(line) <= _SHOWN else line[: _SHOWN - 1].rstrip() + "…"


_CHAT_SOURCE = "chat:"  # a proposal the model made during the user's message <id>
# Cancels one reminder of a user (the reminder service's ``cancel``); raises ReminderError.
CancelReminder = Callable[[str, int], Reminder]
# A reminder's row id -> the number its owner knows it by (None: no such row of theirs).
ReminderNumber = Callable[[str, int], int | None]
# Puts back what an act on reminders changed (agent/reminders/acts.py's ``put_back``): the
# rows as they are again, or None when they changed since (nothing written).
PutBackReminders = Callable[[str, dict[str, Any]], "list[Reminder] | None"]
_REMINDER_ACTS = frozenset({"snooze", "done", "cancel", "set", "tz"})
# What the command was, for an act that changed nothing ("your /pin").
_COMMANDS = {
    "revise": "edit",
    "set": "reminders confirm",
    "snooze": "reminders snooze",
    "done": "reminders done",
    "cancel": "reminders cancel",
}


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
        self.cancel_reminder: CancelReminder | None = None  # set by the composition root
        self.put_back_reminders: PutBackReminders | None = None  # and this
        self.reminder_number: ReminderNumber | None = None  # and this: how a row is named

    def _number(self, user_key: str, ident: object) -> object:
        """The number the person knows a reminder by (a row id is never shown to them)."""
        text = str(ident)
        if self.reminder_number is None or not text.isdigit():
            return ident
        number = self.reminder_number(user_key, int(text))
        return ident if number is None else number

    @property
    def minutes(self) -> int:
        """How long an undo copy is kept."""
        return int(self.undo_store.window.total_seconds() // 60)

    async def forget(
        self, user_key: str, entry_id: str, *, now: datetime, lang: str = "en", copy: bool = True
    ) -> Said:
        """Forget one memory of ``user_key`` (and what it replaced) and redact its text.

        The copies are blanked first and the entry deleted last: when a file cannot be read,
        the copies already blanked are put back and the entry stays, so the user can fix the
        file and say /forget again. ``copy=False`` keeps no undo copy (undoing a /remember).
        """
        try:
            doomed = await asyncio.to_thread(self.governance.to_forget, user_key, entry_id)
        except EntryNotFoundError:
            return Said(say("forget_missing", lang, entry_id=entry_id), error=True)
        journal = Journal()
        changed, unreadable = await self.redact(user_key, doomed, journal)
        if unreadable:  # not forgotten halfway: what was blanked comes back until it can all go
            await self.restore(user_key, journal)
            names = ", ".join(unreadable)
            return Said(
                say("forget_unreadable", lang, entry_id=entry_id, names=names),
                error=True,
            )

        def keep(entries: list[Entry]) -> None:
            if copy:  # undoing a /remember keeps none: the user took it back themself
                self.undo_store.keep(user_key, entries, now, journal.to_json())

        try:
            gone = await asyncio.to_thread(self.governance.forget, user_key, entry_id, keep=keep)
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

    def note_made(self, user_key: str, made: str, now: datetime | None = None) -> int:
        """A typed command did ``made`` at once (``memory:<id>``, ``reminder:<id>``): /undo
        may take it back for the minutes returned."""
        self.undo_store.keep_made(user_key, made, now or datetime.now().astimezone())
        return self.minutes

    def note_act(
        self, user_key: str, act: str, extra: dict[str, Any], now: datetime | None = None
    ) -> int:
        """An act on reminders (``snooze``, ``done``, ``cancel``, ``set``, ``tz``) changed what
        ``extra`` says: /undo may put it back for the minutes returned."""
        self.undo_store.keep_act(user_key, act, extra, now or datetime.now().astimezone())
        return self.minutes

    def latest_act(self, user_key: str, now: datetime) -> UndoCopy | None:
        """The user's last act, while /undo can still take it back (else None)."""
        copy = self.undo_store.latest(user_key)
        return copy if copy is not None and copy.expires_at > now else None

    def name_of(self, user_key: str, copy: UndoCopy, lang: str) -> str:
        """What ``copy``'s act was, in ``lang``: "the edit of 'I like green tea'"."""
        if copy.act in _REMINDER_ACTS and copy.extra:
            if copy.act == "tz":
                return say("act_tz", lang, zone=copy.extra.get("shown", ["", "?"])[1])
            rows = copy.extra.get("reminders") or [[0]]
            return say(f"act_{copy.act}", lang, reminder_id=self._number(user_key, rows[0][0]))
        if copy.made.startswith(("final:", "unchanged:")):
            kind, _, rest = copy.made.partition(":")
            act, _, ident = rest.partition(":")
            if kind == "unchanged":
                return say("act_unchanged", lang, command=_COMMANDS.get(act, act))
            return say(f"act_{act}", lang, reminder_id=self._number(user_key, ident))
        if copy.act and copy.gone:  # forgotten since: named by its id, no text is kept
            key = f"act_{copy.act}" if copy.act in _ACTS else "act_change"
            return say(key, lang, text=copy.gone[-1])
        if copy.act:
            first = copy.before[0] if copy.before else copy.after[0]
            key = f"act_{copy.act}" if copy.act in _ACTS else "act_change"
            return say(key, lang, text=_short(first.text))
        if copy.made:
            kind, _, ident = copy.made.partition(":")
            if kind == "reminder":
                return say("act_remind", lang, reminder_id=self._number(user_key, ident))
            found = {e.id: e.text for e in self.memory.entries(user_key)}.get(ident, ident)
            return say("act_remember", lang, text=_short(found))
        return say("act_forget", lang, text=_short(copy.entries[-1].text))

    async def undo(
        self, user_key: str, *, now: datetime, lang: str = "en", made: str = ""
    ) -> Said:
        """Take back the user's last act, and only it, if its window is still open.

        A /forget: its entries and every copy it blanked come back. A typed /remember: the
        memory is forgotten, every copy, keeping no undo copy. A typed /remind: the reminder is
        cancelled. An edit, pin, unpin, scope, keep or restore: the entries read as they did
        before it. ``made`` (an Undo button) names the act: taken back only while it is still
        the last one. What is taken back is named; an older act is never reached past a newer.
        """
        copy = await asyncio.to_thread(self.undo_store.latest, user_key)
        if copy is None or copy.expires_at <= now:
            return Said(say("undo_nothing", lang, minutes=self.minutes), error=True)
        what = self.name_of(user_key, copy, lang)
        if made and copy.made != made:  # a button under an older act: the last one is newer
            return Said(say("undo_not_last", lang, what=what), error=True)
        if copy.made.startswith("final:"):  # the last act; nothing older is reached
            return Said(say("undo_final", lang, what=what), error=True)
        if copy.made.startswith("unchanged:"):
            return Said(say("undo_unchanged", lang, what=what), error=True)
        if copy.act in _REMINDER_ACTS and copy.extra:
            return await self._put_back_reminders(user_key, copy, lang, what)
        if copy.act and copy.gone:  # its memory was forgotten since: nothing to put back
            return Said(say("undo_changed", lang, what=what), error=True)
        if copy.act:
            back = await asyncio.to_thread(
                self.governance.take_back, user_key, copy.before, copy.after
            )
            if not back:  # changed since by something that is not an act of the user here
                return Said(say("undo_changed", lang, what=what), error=True)
            await asyncio.to_thread(self.undo_store.drop, copy.id)
            proposal = str(copy.extra.get("proposal", ""))
            if proposal:  # a confirm: the proposal waits again, as it did before the yes
                await asyncio.to_thread(self.stores.pending.reopen, user_key, proposal)
            if copy.act == "revise" and copy.before:
                return Said(say("undo_revise", lang, what=what, text=copy.before[0].text))
            return Said(say("undo_change", lang, what=what))
        if copy.made:
            await asyncio.to_thread(self.undo_store.drop, copy.id)  # a second press: nothing
            return await self._take_back(user_key, copy.made, now, lang, what)
        await asyncio.to_thread(self.governance.put_back, user_key, copy.entries)
        await self.restore(user_key, Journal.from_json(copy.journal))
        await asyncio.to_thread(self.undo_store.drop, copy.id)
        shown = copy.entries[-1].id
        return Said(say("undo_restored", lang, what=what, entry_id=shown))

    async def _put_back_reminders(
        self, user_key: str, copy: UndoCopy, lang: str, what: str
    ) -> Said:
        """A snooze, done, cancel, set or /tz taken back: its reminders and zone as before."""
        put_back = self.put_back_reminders
        rows = None
        if put_back is not None:
            rows = await asyncio.to_thread(put_back, user_key, copy.extra)
        if rows is None:  # it rang, or was answered, since
            return Said(say("undo_reminder_changed", lang, what=what), error=True)
        await asyncio.to_thread(self.undo_store.drop, copy.id)
        if copy.act == "tz":
            zone = str(copy.extra.get("shown", ["?"])[0])
            return Said(say("undo_tz", lang, what=what, zone=zone))
        ringing = [r for r in rows if r.status == "scheduled"]
        if ringing:
            local = ringing[0].due.astimezone(ZoneInfo(ringing[0].zone))
            when = when_text(local, lang)
            return Said(say("undo_rings_again", lang, what=what, when=when))
        if any(r.status == "proposed" for r in rows):
            return Said(say("undo_waits_again", lang, what=what))
        return Said(say("undo_reminder_back", lang, what=what))

    async def _take_back(
        self, user_key: str, made: str, now: datetime, lang: str, what: str
    ) -> Said:
        """Forget the memory a typed /remember saved, or cancel the reminder /remind set."""
        kind, _, ident = made.partition(":")
        if kind == "reminder":
            if not ident.isdigit() or self.cancel_reminder is None:
                return Said(say("undo_nothing", lang, minutes=self.minutes), error=True)
            try:
                row = await asyncio.to_thread(self.cancel_reminder, user_key, int(ident))
            except ReminderError as exc:  # done, rung or cancelled meanwhile
                return Said(exc.text(lang), error=True)
            return Said(say("undo_reminder", lang, reminder_id=row.number, text=row.text))
        said = await self.forget(user_key, ident, now=now, lang=lang, copy=False)
        return said if said.error else Said(say("undo_saved", lang, entry_id=ident))

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
    async def redact(
        self, user_key: str, gone: list[Entry], journal: Journal
    ) -> tuple[list[str], list[str]]:
        """Blank the copies of ``gone`` in every file and row of the user, noting each change
        in ``journal``.

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
            redact_session(session, redactor, message_ids, journal)
            changed, unreadable = await asyncio.to_thread(
                self._redact_files, user_key, redactor, refs, journal
            )
        await asyncio.to_thread(self._redact_rows, user_key, redactor, ids, journal)
        return changed, unreadable

    async def restore(self, user_key: str, journal: Journal) -> None:
        """Put back every unit a forget changed that still reads as it left it (``/undo``)."""
        async with self.sessions.locked(user_key) as session:
            restore_session(session, journal)
            changed = await asyncio.to_thread(self._restore_files, user_key, journal)
        await asyncio.to_thread(self._restore_rows, user_key, journal)
        await asyncio.to_thread(self._reindex, user_key, changed)

    def _said_in_logs(self, user_key: str, refs: frozenset[str]) -> list[str]:
        said: list[str] = []
        for f in day_files(self.memory.paths(user_key)) if refs else []:
            try:
                said += said_in_log(f.stem, read_text(f), refs)
            except CorruptFileError:
                continue  # reported by the redaction that follows
        return said

    def _redact_files(
        self, user_key: str, redactor: Redactor, refs: frozenset[str], journal: Journal
    ) -> tuple[list[str], list[str]]:
        changed, unreadable = self.daily_log.rewrite(
            user_key, lambda day, text: redact_log(day, text, redactor, refs, journal)
        )
        paths = self.memory.paths(user_key)
        for rel, path in (
            ("MEMORY_FULL.md", paths.memory_full_md),
            ("auto_summaries.md", paths.auto_summaries_md),
        ):
            try:
                if redact_summaries(path, redactor, journal):
                    changed.append(rel)
            except CorruptFileError:
                unreadable.append(rel)

        def topic(summary: str) -> str:
            new = redactor(summary)
            journal.note("topic", "summary", summary, new)
            return new

        # MEMORY_TOPIC.md's summary may quote the memory (it is not indexed: nothing to sync).
        self._topics().redact(user_key, topic)
        # The keyword index lists words the summaries name: a word of the forgotten text that
        # only the removed copies named goes with them.
        left: str | None
        try:
            left = "".join(read_text(p) for p in (paths.memory_full_md, paths.auto_summaries_md))
            left = left.lower()
        except CorruptFileError:
            left = None  # reported above: keep every keyword the summaries may still name

        def keep(k: str) -> bool:
            if redactor(k) != k:
                return False
            return left is None or not redactor.names(k) or k.lower() in left

        try:
            self._edit_keywords(user_key, keep, journal)
        except CorruptFileError:
            unreadable.append("MEMORY.md")
        return changed, unreadable

    def _topics(self) -> TopicIndex:
        return TopicIndex(self.memory.data_dir, TopicIndexConfig())

    def _edit_keywords(
        self, user_key: str, keep: Callable[[str], bool], journal: Journal | None = None
    ) -> None:
        """Drop the keywords of MEMORY.md's index that are copies (``keep`` says which stay)."""
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            kept = tuple(k for k in doc.keywords if keep(k))
            if kept != doc.keywords:
                if journal is not None:
                    journal.note("keywords", "index", "\n".join(doc.keywords), "\n".join(kept))
                self.memory.write_document(user_key, replace(doc, keywords=kept), index=False)

    def _redact_rows(
        self, user_key: str, redactor: Redactor, ids: frozenset[str], journal: Journal
    ) -> None:
        self.stores.pending.redact(user_key, redactor, ids, FORGOTTEN, journal.noter("pending"))
        self.stores.short_term.redact(user_key, redactor, journal.noter("short_term"))
        self.stores.why.redact(user_key, redactor, ids, FORGOTTEN, journal.noter("why"))
        self.undo_store.hide(user_key, ids, journal.noter("acts"))  # an edit's old text...
        self.undo_store.checkpoint()

    def _restore_files(self, user_key: str, journal: Journal) -> list[str]:
        changed: list[str] = []
        days = {p.removeprefix("log:") for p in journal.places("log:")}
        if days:
            changed, _ = self.daily_log.rewrite(
                user_key,
                lambda day, text: restore_log(day, text, journal) if day in days else text,
            )
        paths = self.memory.paths(user_key)
        for rel, path in (
            ("MEMORY_FULL.md", paths.memory_full_md),
            ("auto_summaries.md", paths.auto_summaries_md),
        ):
            try:
                if restore_summaries(path, journal):
                    changed.append(rel)
            except CorruptFileError:
                log.warning("undo for %s: %s cannot be read, left as it is", user_key, rel)
        topic = journal.at("topic")
        if topic:
            self._topics().redact(user_key, lambda s: put_back(topic, "summary", s))
        keywords = journal.at("keywords").get("index")
        if keywords is not None:
            self._put_back_keywords(user_key, keywords)
        return changed

    def _put_back_keywords(self, user_key: str, change: tuple[str, str]) -> None:
        before = [k for k in change[0].split("\n") if k]
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            now = "\n".join(doc.keywords)
            back = (
                tuple(before)
                if now == change[1]
                else doc.keywords + tuple(k for k in before if k not in doc.keywords)
            )
            if back != doc.keywords:
                self.memory.write_document(user_key, replace(doc, keywords=back), index=False)

    def _restore_rows(self, user_key: str, journal: Journal) -> None:
        self.stores.pending.put_back(user_key, journal.at("pending"))
        self.stores.short_term.put_back(user_key, journal.at("short_term"))
        self.stores.why.put_back(user_key, journal.at("why"))
        self.undo_store.put_back(user_key, journal.at("acts"))

    def _reindex(self, user_key: str, changed: list[str]) -> None:
        for rel in changed:
            self.memory.indexer.sync_file(user_key, rel, force=True)
        self.memory.indexer.store.scrub()
        log.info("forget for %s: %d files redacted", user_key, len(changed))
