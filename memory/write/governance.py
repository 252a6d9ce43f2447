"""Memory governance (docs/memory-lifecycle.md): derived fields, conflicts, supersedes, status.

Derived fields, used when the proposer gives none:

- ``summary``: an entry of at most 50 characters is its own summary and gets no summary line;
  a longer one gets its first sentence (or its start) cut to 50 characters.
- ``canonical_topic``: not guessed from the text (a wrong topic would make false conflicts).
  It comes from the proposer (the LLM's ``memory_save`` may name one), or is inherited from
  the memory a new entry replaces, so a chain keeps one topic.
- section: a keyword heuristic over the text, zh + en
  (:func:`memory.base.sections.choose_section`).
- ``memory_class``: ``policy`` when the text states a standing rule (always / never / must /
  一律 / 必須 / 永遠 ...), else ``episodic``.

Every status change is written into the entry itself: ``status``, ``status_changed`` and a
``history:`` line ``<time> <old> -> <new>: <reason>``, so a person reading MEMORY.md sees what
happened and can undo it by editing the line (or with :meth:`Governance.restore`). The user's
own changes from chat (pin, scope, keep, edit: :mod:`memory.write.curation`) get a history line
too, ``<time> active -> active: pinned by the user``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, replace
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from memory.base.markdown import (
    STATUSES,
    SUMMARY_MAX_CHARS,
    Entry,
    MemoryClass,
    MemoryDocument,
    MemoryStatus,
)
from memory.errors import EntryNotFoundError
from memory.index.passages import PassageCache
from memory.index.sources import KIND_MEMORY
from memory.state.undo import UndoStore
from memory.state.usage import AccessCounter
from memory.store.service import MemoryService

if TYPE_CHECKING:
    from memory.write.archaeology import ChainMatch

LIVE = (MemoryStatus.ACTIVE, MemoryStatus.LOW_PRIORITY)
# Called with the entries a forget is about to delete (the undo copy is taken there).
Keeper = Callable[[list[Entry]], object]

_POLICY_WORDS = re.compile(
    r"一律|必須|必须|永遠|永远|總是|总是|不准|禁止|\balways\b|\bnever\b|\bmust\b", re.IGNORECASE
)
_SENTENCE_END = re.compile(r"[。！？!?；;\n]|\.(?:\s|$)")


def derive_summary(text: str) -> str:
    """At most 50 characters: "" when the text itself fits, else its first sentence, cut."""
    text = " ".join(text.split())
    if len(text) <= SUMMARY_MAX_CHARS:
        return ""
    m = _SENTENCE_END.search(text)
    first = text[: m.start()].strip() if m and m.start() > 0 else text
    if len(first) <= SUMMARY_MAX_CHARS:
        return first
    return first[: SUMMARY_MAX_CHARS - 1].rstrip() + "…"


def summary_of(entry: Entry) -> str:
    """The entry's summary, or its text when the text is short enough to be its own."""
    return entry.summary or derive_summary(entry.text) or " ".join(entry.text.split())


def guess_class(text: str) -> MemoryClass:
    """``policy`` for a standing rule, else ``episodic``."""
    return MemoryClass.POLICY if _POLICY_WORDS.search(text) else MemoryClass.EPISODIC


def history_line(now: datetime, old: str, new: str, reason: str) -> str:
    """One readable line of an entry's history."""
    return f"{now.isoformat(timespec='seconds')} {old} -> {new}: {reason}"


def with_status(entry: Entry, status: str, now: datetime, reason: str) -> Entry:
    """``entry`` moved to ``status`` with the change recorded in its history."""
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    return replace(
        entry,
        status=status,
        status_changed_at=now.isoformat(timespec="seconds"),
        history=(*entry.history, history_line(now, entry.status, status, reason)),
    )


def _norm(text: str) -> str:
    return re.sub(r"[\s\W_]+", "", text.lower())


def chain_of(entries: Iterable[Entry], entry_id: str) -> list[Entry]:
    """The supersedes chain (the connected versions) holding ``entry_id``, oldest first."""
    by_id = {e.id: e for e in entries}
    links: dict[str, set[str]] = {eid: set() for eid in by_id}
    for e in by_id.values():
        for old in e.supersedes:
            if old in by_id:
                links[e.id].add(old)
                links[old].add(e.id)
    seen: set[str] = set()
    todo = [entry_id] if entry_id in by_id else []
    while todo:
        eid = todo.pop()
        if eid not in seen:
            seen.add(eid)
            todo.extend(links[eid] - seen)
    depth: dict[str, int] = {}

    def depth_of(eid: str, trail: frozenset[str] = frozenset()) -> int:
        # Versions created in the same second still sort after what they replace.
        if eid not in depth:
            olds = [o for o in by_id[eid].supersedes if o in seen and o not in trail]
            depth[eid] = 1 + max((depth_of(o, trail | {eid}) for o in olds), default=-1)
        return depth[eid]

    return sorted((by_id[i] for i in seen), key=lambda e: (e.created_at, depth_of(e.id), e.id))


def predecessors(entries: Iterable[Entry], entry_id: str) -> list[Entry]:
    """Every version ``entry_id`` replaced, directly or through others, oldest first."""
    by_id = {e.id: e for e in entries}
    seen: set[str] = {entry_id}
    todo = list(by_id[entry_id].supersedes) if entry_id in by_id else []
    while todo:
        eid = todo.pop()
        if eid in by_id and eid not in seen:
            seen.add(eid)
            todo.extend(by_id[eid].supersedes)
    seen.discard(entry_id)
    return sorted((by_id[i] for i in seen), key=lambda e: (e.created_at, e.id))


def versions_of(entries: Iterable[Entry], entry_id: str) -> list[Entry]:
    """What forgetting ``entry_id`` removes, oldest first: it and every version it replaced;
    for a current version also every replaced version of its chain (after a restore the
    version that replaced it is history of the same memory), never another current one."""
    entries = list(entries)
    gone = {e.id: e for e in predecessors(entries, entry_id)}
    entry = next(e for e in entries if e.id == entry_id)
    if entry.status in LIVE:
        gone |= {e.id: e for e in chain_of(entries, entry_id) if e.status not in LIVE}
    gone.pop(entry_id, None)
    return [*sorted(gone.values(), key=lambda e: (e.created_at, e.id)), entry]


def chains(entries: Iterable[Entry]) -> list[list[Entry]]:
    """Every chain of two or more versions, each oldest first."""
    entries = list(entries)
    done: set[str] = set()
    out = []
    for e in entries:
        if e.id in done or not (e.supersedes or any(e.id in o.supersedes for o in entries)):
            continue
        chain = chain_of(entries, e.id)
        done.update(c.id for c in chain)
        if len(chain) > 1:
            out.append(chain)
    return out


def export_records(entries: Iterable[Entry], access: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Current entries as plain dicts with status, chain links, use and their older versions.

    A replaced (``deprecated``) version is not a record of its own: it is in ``versions``
    (oldest first) of its chain's current version, so a reader of the export sees each memory
    once. A replaced version whose chain has no current one stays a record (nothing is lost).
    ``access`` maps entry ids to objects with ``count`` and ``last_access``
    (:class:`memory.state.usage.AccessStat`).
    """
    entries = list(entries)

    def record(e: Entry, chain: list[Entry]) -> dict[str, Any]:
        out = asdict(e)
        out["superseded_by"] = [o.id for o in entries if e.id in o.supersedes]
        out["chain"] = [c.id for c in chain] if len(chain) > 1 else []
        stat = access.get(e.id)
        out["access_count"] = stat.count if stat else 0
        out["last_access"] = stat.last_access if stat else ""
        return out

    records: list[dict[str, Any]] = []
    for e in entries:
        chain = chain_of(entries, e.id)
        current = [c for c in chain if c.status != MemoryStatus.DEPRECATED]
        if e.status == MemoryStatus.DEPRECATED and current:
            continue  # listed under its current version
        r = record(e, chain)
        holder = bool(current) and e is current[-1]
        older = [c for c in chain if c.status == MemoryStatus.DEPRECATED] if holder else []
        r["versions"] = [record(c, chain) for c in older]
        records.append(r)
    return records


def chains_markdown(entries: Iterable[Entry]) -> str:
    """Every chain as one HTML comment line each (invisible when rendered, ignored on parse)."""
    lines = []
    for chain in chains(entries):
        steps = " -> ".join(f"{e.id} ({e.created_at[:10] or '?'}, {e.status})" for e in chain)
        lines.append(f"<!-- chain: {steps} -->")
    return "\n".join(lines) + ("\n" if lines else "")


class Governance:
    """Conflicts, chains and status changes over one :class:`MemoryService`."""

    def __init__(
        self,
        memory: MemoryService,
        top_k: int = 5,
        similarity: float = 0.9,
        access: AccessCounter | None = None,
        undo: UndoStore | None = None,
    ) -> None:
        self.memory = memory
        self.top_k = top_k
        self.similarity = similarity
        self.access = access  # use counts, which a new version inherits
        self.undo = undo  # the user's acts, newest last: what /undo takes back
        self._noting: set[str] = set()  # users whose act is being noted (under their lock)

    # -- the user's changes to confirmed memories, and their undo -------------------------
    def noting(
        self,
        user_key: str,
        act: str,
        now: datetime,
        change: Callable[[], Entry],
        extra: Mapping[str, Any] | None = None,
    ) -> Entry:
        """Run ``change`` (one act of the user on confirmed memories) and note, for /undo,
        the entries it changed as they were and as it left them (and ``extra``: a confirm's
        proposal). An act that changed nothing is noted as such (/undo does not reach past
        it); one refused (it raised, nothing changed) is not an act."""
        with self.memory.lock(user_key):
            if user_key in self._noting:  # a step of a larger act (the page's edit form)
                return change()
            self._noting.add(user_key)
            before = {e.id: e for e in self.memory.entries(user_key)}
            done = False
            try:
                out = change()
                done = True
                return out
            finally:  # a step refused halfway: what the steps before it did is still noted
                self._noting.discard(user_key)
                after = {e.id: e for e in self.memory.entries(user_key)}
                was = [e for i, e in before.items() if after.get(i) != e]
                left = [e for i, e in after.items() if before.get(i) != e]
                if self.undo is not None and (was or left):
                    self.undo.keep_change(user_key, act, was, left, now, extra)
                elif self.undo is not None and done:
                    self.undo.keep_made(user_key, f"unchanged:{act}", now)

    def note_final(self, user_key: str, act: str, now: datetime) -> None:
        """An act of the user /undo cannot take back (refusing or editing a proposal, /new):
        the last act still, so /undo says so and never reaches past it."""
        if self.undo is not None:
            self.undo.keep_made(user_key, f"final:{act}", now)

    def take_back(self, user_key: str, before: Iterable[Entry], after: Iterable[Entry]) -> bool:
        """Undo one noted change: ``before`` comes back, what it added goes. Only while every
        entry it left still reads as it left it (else False, nothing written)."""
        before, after = list(before), list(after)
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            present = doc.by_id()
            if any(present.get(e.id) != e for e in after):
                return False
            olds = {e.id for e in before}
            added = [e.id for e in after if e.id not in olds]
            for entry_id in added:
                doc = doc.without(entry_id)
            for e in before:
                doc = doc.with_entry(e)
            self.memory.write_document(user_key, doc)
        if self.access is not None:
            for entry_id in added:
                self.access.forget(user_key, entry_id)
        return True

    def inherit_use(self, user_key: str, new_id: str, old_ids: Iterable[str]) -> None:
        """A new version keeps the use of what it replaced (its health does not start over)."""
        if self.access is not None:
            self.access.inherit(user_key, new_id, old_ids)

    def used(self, user_key: str, entry_id: str, now: datetime) -> None:
        """One explicit act of the user on the memory (opened, pinned, kept, edited...)."""
        if self.access is not None:
            self.access.bump(user_key, [entry_id], now)

    def find_duplicate(self, user_key: str, text: str) -> Entry | None:
        """A live entry whose text equals ``text`` (ignoring spaces and punctuation)."""
        key = _norm(text)
        for e in self.memory.entries(user_key):
            if e.status in LIVE and _norm(e.text) == key:
                return e
        return None

    def find_conflicts(self, user_key: str, text: str, topic: str = "") -> list[Entry]:
        """Live entries on the same canonical topic, then very similar ones."""
        entries = self.memory.entries(user_key)
        live = {e.id: e for e in entries if e.status in LIVE}
        if not live:
            return []  # nothing to conflict with: skip the embedding work
        found = [e for e in live.values() if topic and e.canonical_topic == topic]
        for hit in self.memory.search(user_key, text, self.top_k):
            chunk = hit.chunk
            if chunk.kind != KIND_MEMORY or chunk.unit_id not in live:
                continue
            if (hit.vector_similarity or 0.0) >= self.similarity:
                found.append(live[chunk.unit_id])
        return list({e.id: e for e in found}.values())

    def archaeology(self, user_key: str, topic_or_id: str) -> list[Entry]:
        """Every version of a memory, oldest first: by id, by topic, else by meaning.

        An entry id gives its chain, a ``canonical_topic`` every chain of it; anything else
        gives the chains the words are about (:meth:`history`).
        """
        entries = self.memory.entries(user_key)
        key = topic_or_id.strip()
        if any(e.id == key for e in entries):
            return chain_of(entries, key)
        found: list[list[Entry]] = []
        seen: set[str] = set()
        for e in entries:
            if e.canonical_topic == key and e.id not in seen:
                chain = chain_of(entries, e.id)
                seen.update(c.id for c in chain)
                found.append(chain)
        # Chains of one topic, each oldest first, the chain that started earliest first.
        found.sort(key=lambda chain: (chain[0].created_at, chain[0].id))
        if not found:  # not an id or a topic as written: what the words are about
            found = [list(m.chain) for m in self.history(user_key, key)]
        return [e for chain in found for e in chain]

    @cached_property
    def _topic_vectors(self) -> PassageCache:
        return PassageCache(self.memory.searcher.embedder)

    def history(self, user_key: str, query: str) -> list[ChainMatch]:
        """The supersedes chains ``query`` is about, by id, topic or meaning (``/history``)."""
        from memory.write.archaeology import find_history  # it builds on this module's chains

        return find_history(self.memory, self._topic_vectors, user_key, query)

    def set_status(
        self, user_key: str, entry_id: str, status: str, *, now: datetime, reason: str
    ) -> Entry:
        """Change one entry's status in MEMORY.md (recorded in its history) and re-index."""
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            entry = self._get(doc, entry_id)
            if entry.status == status:
                return entry
            changed = with_status(entry, status, now, reason)
            self.memory.write_document(user_key, doc.with_entry(changed))
        return changed

    def restore(self, user_key: str, entry_id: str, *, now: datetime) -> Entry:
        """Make a deprecated, low-priority or archived entry active again.

        Its health's recency starts again from ``now`` (``refreshed``): what the user brought
        back should not fade straight back into the archive. A replaced version becomes the
        current one of its chain: the versions that were current (live) are ``deprecated``,
        replaced by it, so a chain never has two current versions.
        """
        stamp = now.isoformat(timespec="seconds")
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            entry = self._get(doc, entry_id)
            others = [
                e for e in chain_of(doc.entries, entry.id) if e.id != entry.id and e.status in LIVE
            ]
            if entry.status == MemoryStatus.ACTIVE and not others:
                return entry
            reason = f"replaced by {entry.id} (restored by the user)"
            for other in others:
                doc = doc.with_entry(with_status(other, MemoryStatus.DEPRECATED, now, reason))
            changed = entry
            if entry.status != MemoryStatus.ACTIVE:
                restored = with_status(entry, MemoryStatus.ACTIVE, now, "restored")
                changed = replace(restored, refreshed_at=stamp)
            self.memory.write_document(user_key, doc.with_entry(changed))
        if others:
            self.inherit_use(user_key, changed.id, [o.id for o in others])
        return changed

    def archived(self, user_key: str) -> list[Entry]:
        """The user's archived entries, most recently archived first."""
        gone = [e for e in self.memory.entries(user_key) if e.status == MemoryStatus.ARCHIVED]
        return sorted(gone, key=lambda e: e.status_changed_at, reverse=True)

    def to_forget(self, user_key: str, entry_id: str) -> list[Entry]:
        """What :meth:`forget` would delete: the versions ``entry_id`` replaced, then it."""
        doc = self.memory.document(user_key)
        entry = self._get(doc, entry_id)
        return versions_of(doc.entries, entry.id)

    def forget(self, user_key: str, entry_id: str, *, keep: Keeper | None = None) -> list[Entry]:
        """Delete an entry and every version it replaced from MEMORY.md and the index.

        Forgetting the latest version of a memory forgets the older versions too: their text
        is the same fact as it used to be, and leaving it in deprecated entries would keep what
        the user asked to forget. Forgetting the current version forgets every replaced version
        of its chain (a restored old version's newer ones too); a newer current version that
        replaced a forgotten old one stays (:func:`versions_of`). ``keep`` is
        called with what will be removed before the file is written (the undo copy). Returns
        the removed entries, the named one last.
        """
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            entry = self._get(doc, entry_id)
            gone = versions_of(doc.entries, entry.id)
            if keep is not None:
                keep(gone)
            for e in gone:
                doc = doc.without(e.id)
            self.memory.write_document(user_key, doc)
        return gone

    def put_back(self, user_key: str, entries: Iterable[Entry]) -> list[Entry]:
        """Write forgotten entries back as they were (``/undo``); ids already present stay."""
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            present = doc.by_id()
            back = [e for e in entries if e.id not in present]
            for e in back:
                doc = doc.with_entry(e)
            if back:
                self.memory.write_document(user_key, doc)
        return back

    @staticmethod
    def _get(doc: MemoryDocument, entry_id: str) -> Entry:
        entry = doc.by_id().get(entry_id.strip())
        if entry is None:
            raise EntryNotFoundError(entry_id)
        return entry
