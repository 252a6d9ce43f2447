"""The page's writes, each through the same write path as chat.

A new text, pin, scope, keep and restore are the chat's own curation acts (``/edit``, ``/pin``,
``/scope``, keep, ``/restore``: :class:`~bot.frontdesk.adapters.CurationAdapter`), sealed as the
user's acts with ``via="page"``: a new text passes the chat's guards (length, noise, secrets,
duplicates) and becomes a new version that supersedes the old one (the chain keeps its topic).
Section, topic and weight, which chat has no command for, change in place under the user's
lock, masked like a proposer's fields. Forget and undo are the chat's :class:`Forgetter`;
answers to proposals are sealed acts too. An import only proposes: the user confirms what it
found, in a batch.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from agent.forget import Said
from agent.texts import error_text, say
from bot.app import Services
from bot.errors import BackendError
from bot.frontdesk.adapters import ConfirmAdapter, CurationAdapter, view_of
from bot.frontdesk.ports import Decision, MemoryLine, Outcome
from bot.web.i18n import word
from bot.web.importing import IMPORTED, Read, bad_field, read_file
from memory.base.guards import mask
from memory.base.markdown import DEFAULT_SECTION, Entry, parse_memory
from memory.base.sections import known_section
from memory.errors import EntryNotFoundError
from memory.write.decisions import ProposalRefusedError, section_name
from memory.write.governance import LIVE
from memory.write.proposals import REJECTED

MAX_IMPORT_BYTES = 2_000_000
MAX_IMPORT_ENTRIES = 500
_SCOPE = re.compile(r"global|(?:project|lang):\S+")
log = logging.getLogger(__name__)


class ShapeError(ValueError):
    """A write the page refuses: a page sentence (``key``) or the write path's refusal."""

    def __init__(
        self, key: str, refusal: ProposalRefusedError | None = None, **fields: object
    ) -> None:
        super().__init__(key)
        self.key = key
        self.refusal = refusal
        self.fields = fields

    def said(self, lang: str) -> str:
        """The sentence in ``lang``."""
        if self.refusal is not None:
            return error_text(self.refusal, lang)
        backend = self.fields.get("backend")
        if isinstance(backend, BackendError):  # the chat's sentence, in the reader's language
            return backend.said(lang)
        return word(self.key, lang).format(**self.fields)


@dataclass(frozen=True, slots=True)
class EditForm:
    """What the entry's edit form sent."""

    text: str
    section: str
    topic: str
    weight: str
    core: bool
    scope: str


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import proposed and what it could not (masked text, and why)."""

    proposed: list[str]
    refused: list[tuple[str, ShapeError]]


def _line(value: str) -> str:
    return mask(" ".join(value.split()))


def _refused(exc: ProposalRefusedError) -> ShapeError:
    return ShapeError("refused", exc)


def shown(entries: list[Entry]) -> list[Entry]:
    """The memories a person counts: replaced versions are their current one's history."""
    return [e for e in entries if e.status != "deprecated"]


class Shaper:
    """Every write the page makes, for one process's services."""

    def __init__(self, services: Services) -> None:
        # The bag stops here: the page keeps only the services its writes go through (the
        # world tests build a Shaper over a process's services, as the page's deps do).
        self.memory = services.memory
        self.governance = services.governance
        self.confirm = services.confirm
        self.forgetter = services.forgetter
        self.answers = ConfirmAdapter(services.confirm, services.user_acts)
        self.curation = CurationAdapter(services.confirm, services.user_acts)

    def entry(self, user_key: str, entry_id: str) -> Entry:
        """The user's own entry, or :class:`EntryNotFoundError` (another's is not theirs)."""
        found = self.memory.document(user_key).by_id().get(entry_id)
        if found is None:
            raise EntryNotFoundError(entry_id)
        return found

    # -- editing -------------------------------------------------------------------------
    def edit(self, user_key: str, entry_id: str, form: EditForm, now: datetime) -> Entry:
        """Apply the edit form: a new text first (a new version), then the fields. The form
        is one act of the user: one /undo (the page's Undo) takes all of it back."""
        old = self.entry(user_key, entry_id)
        act = "revise" if form.text.strip() and form.text.strip() != old.text else "change"
        return self.governance.noting(
            user_key, act, now, lambda: self._edit(user_key, old, form, now)
        )

    def _edit(self, user_key: str, old: Entry, form: EditForm, now: datetime) -> Entry:
        """The edit form's steps (under :meth:`edit`'s one note)."""
        fields = self._fields(old, form)
        text = form.text.strip()
        if not text:
            raise ShapeError("no_text")
        entry_id = old.id
        # One form sent is one act of the user: its steps do not count, the form does, once.
        if text != old.text:
            entry_id = self._act(
                lambda: self.curation.revise(user_key, old.id, text, via="page", count=False)
            )
        current = self.entry(user_key, entry_id)
        if fields["scope"] != current.scope:
            scope = str(fields["scope"])
            self._act(
                lambda: self.curation.set_scope(user_key, entry_id, scope, via="page", count=False)
            )
        if fields["is_core"] != current.is_core:
            self.pin(user_key, entry_id, bool(fields["is_core"]), count=False)
        amended = self._amend(
            user_key,
            entry_id,
            {k: fields[k] for k in ("section", "canonical_topic", "user_weight")},
        )
        self.governance.used(user_key, amended.id, now)
        return amended

    @staticmethod
    def _act(do: Callable[[], MemoryLine]) -> str:
        """Run a curation act; its refusal (a guard, an archived entry) is a page sentence."""
        try:
            return do().id
        except BackendError as exc:
            raise ShapeError("as_is", text=str(exc), backend=exc) from exc

    def _fields(self, old: Entry, form: EditForm) -> dict[str, object]:
        scope = form.scope.strip() or "global"
        if not _SCOPE.fullmatch(scope):
            raise ShapeError("bad_scope")
        try:
            weight = int(form.weight.strip() or old.user_weight)
        except ValueError:
            weight = -1
        if not 0 <= weight <= 10:
            raise ShapeError("bad_weight")
        return {
            "section": section_name(_line(form.section))[:80] or DEFAULT_SECTION,
            "canonical_topic": _line(form.topic)[:80],
            "user_weight": weight,
            "is_core": form.core,
            "scope": scope,
        }

    def _amend(self, user_key: str, entry_id: str, fields: dict[str, object]) -> Entry:
        memory = self.memory
        with memory.lock(user_key):
            doc = memory.document(user_key)
            old = doc.by_id().get(entry_id)
            if old is None:
                raise EntryNotFoundError(entry_id)
            typed = str(fields.get("section", old.section))
            # Either half of a section named in both languages ("Personal", 個人) is that
            # section, as wherever a section is typed (memory.base.sections.known_section).
            fields = {**fields, "section": known_section(typed, doc.sections)}
            new = replace(old, **fields)  # type: ignore[arg-type]
            if new != old:
                memory.write_document(user_key, doc.with_entry(new))
        return new

    def pin(self, user_key: str, entry_id: str, on: bool, count: bool = True) -> str:
        """The chat's /pin (or unpin)."""
        self.entry(user_key, entry_id)
        return self._act(
            lambda: self.curation.pin(user_key, entry_id, on, via="page", count=count)
        )

    def pin_on(self, user_key: str, entry_id: str) -> str:
        """Pin."""
        return self.pin(user_key, entry_id, True)

    def pin_off(self, user_key: str, entry_id: str) -> str:
        """Unpin."""
        return self.pin(user_key, entry_id, False)

    def keep(self, user_key: str, entry_id: str) -> str:
        """Keep a fading memory: its recency starts again (the chat's keep button)."""
        self.entry(user_key, entry_id)
        return self._act(lambda: self.curation.keep(user_key, entry_id, via="page"))

    def restore(self, user_key: str, entry_id: str) -> str:
        """The chat's /restore: an archived (or replaced) entry is active again."""
        self.entry(user_key, entry_id)
        return self._act(lambda: self.curation.restore(user_key, entry_id, via="page"))

    # -- forgetting ----------------------------------------------------------------------
    async def forget(self, user_key: str, entry_id: str, now: datetime, lang: str) -> Said:
        """The chat's /forget: delete, redact everywhere, keep an undo copy."""
        return await self.forgetter.forget(user_key, entry_id, now=now, lang=lang)

    async def undo(self, user_key: str, now: datetime, lang: str) -> Said:
        """The chat's /undo."""
        return await self.forgetter.undo(user_key, now=now, lang=lang)

    async def forget_all(self, user_key: str, now: datetime, lang: str) -> tuple[int, Said | None]:
        """Delete every memory of the user through /forget's own path (every copy blanked:
        logs, summaries, index, sessions, /why), keeping no undo copy: final, and said so.
        Returns how many memories (replaced versions not counted) went, and the sentence of a
        forget that could not finish (an unreadable file: what is left stays whole, to delete
        again once it is fixed)."""
        forgetter, memory = self.forgetter, self.memory
        before = await asyncio.to_thread(memory.entries, user_key)
        problem: Said | None = None
        for _ in range(len(before)):  # each forget takes one entry at least: bounded
            entries = await asyncio.to_thread(memory.entries, user_key)
            if not entries:
                break
            said = await forgetter.forget(user_key, entries[-1].id, now=now, lang=lang, copy=False)
            if said.error:
                problem = said
                break
        left = {e.id for e in await asyncio.to_thread(memory.entries, user_key)}
        if len(left) < len(before):
            # Final: no older act can be undone past it, and no copy of theirs is kept.
            await asyncio.to_thread(forgetter.undo_store.drop_user, user_key)
            await asyncio.to_thread(forgetter.note_made, user_key, "final:forget_all:", now)
        return sum(1 for e in shown(before) if e.id not in left), problem

    def undo_label(self, user_key: str, now: datetime, lang: str) -> str:
        """The Undo button's words, naming the user's last act ("" when none can be undone):
        the button takes back that act, the chat's /undo."""
        forgetter = self.forgetter
        copy = forgetter.latest_act(user_key, now)
        if copy is None or copy.made.startswith(("final:", "unchanged:")):
            return ""  # the last act is one nothing takes back: no button promises it
        return say("undo_button", lang, what=forgetter.name_of(user_key, copy, lang))

    def add(self, user_key: str, text: str, section: str) -> Outcome:
        """A memory typed on the page: proposed through the guards, then confirmed by the
        user's own press (one that conflicts with a memory waits on /pending: add or replace?)."""
        now = datetime.now().astimezone()
        try:
            p = self.confirm.propose(
                user_key, text, "page", section=_line(section)[:80] or None, now=now
            )
        except ProposalRefusedError as exc:
            raise _refused(exc) from exc
        if p.conflicts_shown:
            return Outcome("edited", p.text, proposal=view_of(p))
        return self.decide(user_key, p.id, "confirm")

    # -- proposals -----------------------------------------------------------------------
    def decide(self, user_key: str, proposal_id: str, decision: Decision) -> Outcome:
        """The user's answer to a proposal, pressed on the page."""
        return self.answers.decide(user_key, proposal_id, decision, via="page")

    def edit_proposal(self, user_key: str, proposal_id: str, text: str) -> Outcome:
        """The user's new text for a waiting proposal."""
        try:
            return self.answers.edit(user_key, proposal_id, text, via="page")
        except Exception as exc:  # BackendError: a refusal already worded for the user
            raise ShapeError("as_is", text=str(exc), backend=exc) from exc

    def import_file(self, user_key: str, name: str, data: bytes, now: datetime) -> ImportReport:
        """Propose every live memory of a Markdown or JSON file; nothing is written yet."""
        if len(data) > MAX_IMPORT_BYTES:
            raise ShapeError("too_large")
        try:
            text = data.decode("utf-8-sig")
            read = _read(name, text)
        except ShapeError:
            raise
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, RecursionError) as exc:
            raise ShapeError("import_bad") from exc  # RecursionError: JSON nested too deep
        proposed: list[str] = []
        refused: list[tuple[str, ShapeError]] = []
        try:
            self._propose_all(user_key, read, now, proposed, refused)
        except Exception as exc:  # a bug of ours, logged: the file is all or nothing
            log.exception("import for %s stopped after %d proposals", user_key, len(proposed))
            if self._withdraw(proposed, now):
                raise ShapeError("import_failed") from exc
            raise ShapeError("import_stopped", made=len(proposed)) from exc
        return ImportReport(proposed, refused)

    def _propose_all(
        self,
        user_key: str,
        read: Read,
        now: datetime,
        proposed: list[str],
        refused: list[tuple[str, ShapeError]],
    ) -> None:
        """Propose each entry of ``read`` once: a text the file repeats is told, not proposed
        twice. What was proposed and what was not are added to the lists as it goes."""
        refused += [(mask(part), ShapeError("import_skipped")) for part in read.skipped]
        seen: set[str] = set()
        for e in read.entries:
            key = " ".join(e.text.split()).casefold()
            if key in seen:
                refused.append((mask(e.text)[:60], ShapeError("import_repeated")))
                continue
            seen.add(key)
            if len(seen) > MAX_IMPORT_ENTRIES:
                refused.append((mask(e.text)[:60], ShapeError("too_many_entries")))
                continue
            values = {k: getattr(e, k) for k in IMPORTED}
            try:
                p = self.confirm.propose(
                    user_key, e.text, "import", section=e.section, now=now, fields=values
                )
            except ProposalRefusedError as exc:
                refused.append((mask(e.text)[:60], _refused(exc)))
                continue
            proposed.append(p.id)

    def _withdraw(self, proposal_ids: list[str], now: datetime) -> bool:
        """Take back the proposals of an import that stopped; False when that failed too."""
        try:
            for pid in proposal_ids:
                self.confirm.store.resolve(pid, REJECTED, now=now)
        except Exception:
            log.exception("could not take back the proposals of a stopped import")
            return False
        return True


def _read(name: str, text: str) -> Read:
    """PCAI's own JSON export checked record by record (all or nothing); another tool's JSON
    (no ``text`` in a record), plain lines and Markdown read by bot/web/importing.py."""
    stripped = text.lstrip()
    if name.lower().endswith(".json") or stripped.startswith(("[", "{")):
        try:
            strict = Read(_entries_of(name, text))
        except ShapeError as exc:  # record 1 has no text: another tool's shape, not ours
            if exc.key != "import_bad_record" or exc.fields != {"n": 1, "field": "text"}:
                raise
        else:
            if strict.entries:
                return strict
    return read_file(name, text)


def _entries_of(name: str, text: str) -> list[Entry]:
    """The live entries of an exported file: JSON (a list of records) or MEMORY.md."""
    stripped = text.lstrip()
    if name.lower().endswith(".json") or stripped.startswith(("[", "{")):
        data = json.loads(text)
        records = data.get("memories", []) if isinstance(data, dict) else data
        if not isinstance(records, list):
            raise ValueError("not a list of memories")
        # Every record is checked before anything is proposed: one bad record refuses the
        # file, so an import is all or nothing (and never a half-import ending in an error).
        entries = [_record(n, r) for n, r in enumerate(records, start=1)]
    else:
        entries = list(parse_memory(text).entries)
    return [e for e in entries if e.status in LIVE]


def _record(n: int, r: object) -> Entry:
    """Record ``n`` of a JSON export as an entry; a :class:`ShapeError` naming what is wrong."""
    if not isinstance(r, dict) or not isinstance(r.get("text"), str) or not r["text"].strip():
        raise ShapeError("import_bad_record", n=n, field="text")
    if (field := bad_field(r)) is not None:
        raise ShapeError("import_bad_record", n=n, field=field)
    known = {k: r[k] for k in (*IMPORTED, "section", "status") if k in r}
    return Entry(id=str(r.get("id", "")), text=str(r["text"]), **known)
