"""The user's decisions about confirmed memories, from chat: pin, scope, edit, keep, restore.

The prompt's layers are filled by these: a pinned memory (``is_core``) is in every prompt (L0)
and never archived; a scoped one (``project:<name>``, ``lang:<name>``) comes in when the
conversation names it (L1). Editing a memory writes a new version that ``supersedes`` it (the
old one stays in the chain as ``deprecated``); keeping a fading memory restarts its recency;
restoring brings an archived one back. Like answering a proposal, each is the user's
decision, so each takes a :class:`~memory.write.consent.UserAct` sealed by the bot layer's mint
(a command or a button press of that user): code holding this service without the mint (the
agent, the model's tools) cannot pin, edit or keep anything.

Each act is noted for ``/undo`` (Governance.noting: the entries it changed, as they were and
as it left them), so ``/undo`` takes back exactly that act and names it.

Each act is also a use of the memory: it adds one to its access count (through
:meth:`~memory.write.governance.Governance.used`, the one door every explicit act of the user
takes; docs/retrieval.md, "Retrieval score"). A front end that makes several acts of one user
event (the memory page's edit form) passes ``count=False`` and counts the event once itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime

from memory.base.markdown import Entry, MemoryDocument, MemoryStatus, new_entry_id
from memory.errors import EntryNotFoundError, EntryNotLiveError
from memory.write.consent import ActCheck, UserAct
from memory.write.decisions import ConfirmationService, check_scope
from memory.write.governance import LIVE, derive_summary, guess_class, history_line, with_status

# A kept memory's weight goes up one step, to at most this (9 is core: /pin's, not keep's).
KEEP_MAX_WEIGHT = 8


class Curation:
    """Pin, scope, edit, keep and restore one user's confirmed memories, as that user's act."""

    def __init__(self, confirm: ConfirmationService, check: ActCheck) -> None:
        self.confirm = confirm
        self.memory = confirm.memory
        self.governance = confirm.governance
        self._check = check

    # -- the user's acts -----------------------------------------------------------------
    def pin(self, act: UserAct, *, now: datetime, count: bool = True) -> Entry:
        """``pin``: the memory goes into every prompt (L0); ``unpin`` undoes it."""
        act = self._check.verify(act, ("pin", "unpin"))
        core = act.action == "pin"
        done = self._noted(
            act, now, lambda: self._set_core(act.user_key, act.proposal_id, core, now=now)
        )
        return self._used(act, done, now, count)

    def scope(self, act: UserAct, *, now: datetime, count: bool = True) -> Entry:
        """``scope``: the memory's scope becomes ``act.text`` (checked)."""
        act = self._check.verify(act, ("scope",))
        scope = check_scope(act.text)
        done = self._noted(
            act, now, lambda: self._set_scope(act.user_key, act.proposal_id, scope, now=now)
        )
        return self._used(act, done, now, count)

    def revise(self, act: UserAct, *, now: datetime, count: bool = True) -> Entry:
        """``revise``: a new version with ``act.text`` supersedes the memory (guards apply);
        the new version inherits the old one's use, then counts this act."""
        act = self._check.verify(act, ("revise",))
        text = self.confirm.check_text(act.user_key, act.text)
        done = self._noted(
            act, now, lambda: self._supersede(act.user_key, act.proposal_id, text, now=now)
        )
        return self._used(act, done, now, count)

    def keep(self, act: UserAct, *, now: datetime, count: bool = True) -> Entry:
        """``keep``: the user keeps a fading memory."""
        act = self._check.verify(act, ("keep",))
        done = self._noted(act, now, lambda: self._keep(act.user_key, act.proposal_id, now=now))
        return self._used(act, done, now, count)

    def restore(self, act: UserAct, *, now: datetime, count: bool = True) -> Entry:
        """``restore``: an archived (or replaced) memory is active again."""
        act = self._check.verify(act, ("restore",))
        done = self._noted(
            act, now, lambda: self.governance.restore(act.user_key, act.proposal_id, now=now)
        )
        return self._used(act, done, now, count)

    def archived(self, user_key: str) -> list[Entry]:
        """The user's archived memories (what /restore can bring back)."""
        return self.governance.archived(user_key)

    # -- the writes (reached only through the acts above) -------------------------------
    def _noted(self, act: UserAct, now: datetime, change: Callable[[], Entry]) -> Entry:
        """Every act here is noted for /undo (its inverse: the entries as they were)."""
        return self.governance.noting(act.user_key, act.action, now, change)

    def _used(self, act: UserAct, done: Entry, now: datetime, count: bool) -> Entry:
        """A done act is one use of the memory it leaves (an edit: the new version)."""
        if count:
            self.governance.used(act.user_key, done.id, now)
        return done

    def _change(
        self, user_key: str, entry_id: str, change: Callable[[Entry], Entry], *, live: bool = True
    ) -> Entry:
        """Apply ``change`` to one entry and write MEMORY.md (under the user's lock)."""
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            entry = _get(doc, entry_id)
            if live and entry.status not in LIVE:
                raise _not_live(entry, doc.entries)
            changed = change(entry)
            if changed != entry:
                self.memory.write_document(user_key, doc.with_entry(changed))
        return changed

    def _set_core(self, user_key: str, entry_id: str, core: bool, *, now: datetime) -> Entry:
        """Pin (``is_core``: in every prompt, never archived) or unpin one live entry."""
        reason = "pinned by the user" if core else "unpinned by the user"

        def pin(e: Entry) -> Entry:
            if e.is_core == core:
                return e
            return replace(e, is_core=core, history=(*e.history, _note(now, e, reason)))

        return self._change(user_key, entry_id, pin)

    def _set_scope(self, user_key: str, entry_id: str, scope: str, *, now: datetime) -> Entry:
        """Give one live entry a scope (``global``, ``project:<name>``, ``lang:<name>``)."""

        def scoped(e: Entry) -> Entry:
            if e.scope == scope:
                return e
            note = _note(now, e, f"scope {e.scope} -> {scope} by the user")
            return replace(e, scope=scope, history=(*e.history, note))

        return self._change(user_key, entry_id, scoped)

    def _keep(self, user_key: str, entry_id: str, *, now: datetime) -> Entry:
        """The user keeps a fading memory: recency starts again, weight one step up (to 8).

        An entry the lifecycle archived meanwhile is brought back (a late press still keeps).
        """
        stamp = now.isoformat(timespec="seconds")

        def kept(e: Entry) -> Entry:
            weight = max(e.user_weight, min(e.user_weight + 1, KEEP_MAX_WEIGHT))
            if e.status == MemoryStatus.ARCHIVED:
                e = with_status(e, MemoryStatus.ACTIVE, now, "kept by the user")
            else:
                e = replace(e, history=(*e.history, _note(now, e, "kept by the user")))
            return replace(e, refreshed_at=stamp, user_weight=weight)

        with self.memory.lock(user_key):
            entry = _get(self.memory.document(user_key), entry_id)
            if entry.status == MemoryStatus.DEPRECATED:
                raise _not_live(entry, self.memory.entries(user_key))
            return self._change(user_key, entry_id, kept, live=False)

    def _supersede(self, user_key: str, entry_id: str, text: str, *, now: datetime) -> Entry:
        """The user's new text for a live entry: a new version that supersedes it.

        The new entry keeps the old one's section, scope, topic, weight and pin; the old one
        becomes ``deprecated`` with the change in its history, so the chain shows both.
        """
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            old = _get(doc, entry_id)
            if old.status not in LIVE:
                raise _not_live(old, doc.entries)
            new = replace(
                old,
                id=new_entry_id(now, text),
                text=text,
                summary=derive_summary(text),
                memory_class=guess_class(text) if old.memory_class != "mixed" else "mixed",
                claims=(),
                supersedes=(old.id,),
                status=MemoryStatus.ACTIVE,
                created_at=now.isoformat(timespec="seconds"),
                status_changed_at="",
                refreshed_at="",
                history=(),
            )
            reason = f"edited by the user: replaced by {new.id}"
            doc = doc.with_entry(
                with_status(old, MemoryStatus.DEPRECATED, now, reason)
            ).with_entry(new)
            self.memory.write_document(user_key, doc)
        self.governance.inherit_use(user_key, new.id, [old.id])
        return new


def _note(now: datetime, entry: Entry, reason: str) -> str:
    """A history line for a change that keeps the status."""
    return history_line(now, entry.status, entry.status, reason)


def _not_live(entry: Entry, entries: Iterable[Entry]) -> EntryNotLiveError:
    """Why ``entry`` cannot be changed: archived, or replaced (by which newer version)."""
    if entry.status == MemoryStatus.DEPRECATED:
        newer = [e.id for e in entries if entry.id in e.supersedes]
        return EntryNotLiveError(entry.id, archived=False, newer=newer[-1] if newer else "")
    return EntryNotLiveError(entry.id, archived=True)


def _get(doc: MemoryDocument, entry_id: str) -> Entry:
    entry = doc.by_id().get(entry_id.strip())
    if entry is None:
        raise EntryNotFoundError(entry_id.strip())
    return entry
