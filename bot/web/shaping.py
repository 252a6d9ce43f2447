"""The page's writes, each through the same write path as chat.

A new text is a new version: it is proposed (length, noise filter, secrets guard, duplicate
check), then confirmed as the user's own "replace" act on the page, which deprecates the edited
entry and links ``supersedes`` (a chain with one topic). Section, topic, weight, pin and scope
are the entry's governance fields and are changed in place under the user's lock, masked and
checked like a proposer's fields. Forget and undo are the chat's :class:`Forgetter`; restore
is :meth:`Governance.restore`; answers to proposals are sealed acts of the user (``via="page"``).
An import only proposes: the user confirms what it found, in a batch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import datetime

from agent.forget import Said
from agent.texts import error_text
from bot.app import Services
from bot.telegram.adapters import ConfirmAdapter
from bot.telegram.ports import Decision, Outcome
from bot.web.i18n import word
from memory.confirm import ProposalRefusedError
from memory.errors import EntryNotFoundError
from memory.governance import LIVE
from memory.guards import mask
from memory.markdown import DEFAULT_SECTION, Entry, parse_memory

MAX_IMPORT_BYTES = 2_000_000
MAX_IMPORT_ENTRIES = 500
_SCOPE = re.compile(r"global|(?:project|lang):\S+")
# Fields an import carries over from a PCAI export (the rest is derived again).
_IMPORTED = ("summary", "memory_class", "scope", "canonical_topic", "is_core", "user_weight")


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


class Shaper:
    """Every write the page makes, for one process's services."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.answers = ConfirmAdapter(services.confirm, services.user_acts)

    def entry(self, user_key: str, entry_id: str) -> Entry:
        """The user's own entry, or :class:`EntryNotFoundError` (another's is not theirs)."""
        found = self.services.memory.document(user_key).by_id().get(entry_id)
        if found is None:
            raise EntryNotFoundError(f"No memory {entry_id!r} of yours. 找不到這條記憶。")
        return found

    # -- editing -------------------------------------------------------------------------
    def edit(self, user_key: str, entry_id: str, form: EditForm, now: datetime) -> Entry:
        """Apply the edit form: fields in place, then a new version if the text changed."""
        old = self.entry(user_key, entry_id)
        fields = self._fields(old, form)
        text = form.text.strip()
        if text and text != old.text:
            if old.status not in LIVE:
                raise ShapeError("not_live", id=old.id, status=old.status)
            return self._new_version(user_key, old, text, fields, now)
        if not text:
            raise ShapeError("no_text")
        return self._amend(user_key, old.id, fields)

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
            "section": _line(form.section)[:80] or DEFAULT_SECTION,
            "canonical_topic": _line(form.topic)[:80],
            "user_weight": weight,
            "is_core": form.core,
            "scope": scope,
        }

    def _amend(self, user_key: str, entry_id: str, fields: dict[str, object]) -> Entry:
        memory = self.services.memory
        with memory.lock(user_key):
            doc = memory.document(user_key)
            old = doc.by_id().get(entry_id)
            if old is None:
                raise EntryNotFoundError(f"No memory {entry_id!r} of yours. 找不到這條記憶。")
            new = replace(old, **fields)  # type: ignore[arg-type]
            if new != old:
                memory.write_document(user_key, doc.with_entry(new))
        return new

    def _new_version(
        self, user_key: str, old: Entry, text: str, fields: dict[str, object], now: datetime
    ) -> Entry:
        confirm = self.services.confirm
        section = str(fields.pop("section"))
        keep = {"enforcement_level": old.enforcement_level, "importance": old.importance}
        try:
            # The edited entry, and only it, is what the new version replaces.
            proposal = confirm.propose(
                user_key,
                text,
                "page",
                section=section,
                now=now,
                fields={**keep, **fields},
                replaces=(old.id,),
            )
        except ProposalRefusedError as exc:
            raise _refused(exc) from exc
        act = self.services.user_acts.act(user_key, proposal.id, "replace", via="page")
        return confirm.confirm(act, now=now)

    def pin(self, user_key: str, entry_id: str, on: bool) -> Entry:
        """Pin (core) or unpin an entry."""
        self.entry(user_key, entry_id)
        return self._amend(user_key, entry_id, {"is_core": on})

    def restore(self, user_key: str, entry_id: str, now: datetime) -> Entry:
        """Make an archived, low-priority or replaced entry active again."""
        self.entry(user_key, entry_id)
        return self.services.governance.restore(user_key, entry_id, now=now)

    # -- forgetting ----------------------------------------------------------------------
    async def forget(self, user_key: str, entry_id: str, now: datetime) -> Said:
        """The chat's /forget: delete, redact everywhere, keep an undo copy."""
        return await self.services.forgetter.forget(user_key, entry_id, now=now)

    async def undo(self, user_key: str, now: datetime) -> Said:
        """The chat's /undo."""
        return await self.services.forgetter.undo(user_key, now=now)

    def can_undo(self, user_key: str, now: datetime) -> bool:
        """Whether the user's latest forget can still be undone."""
        copy = self.services.forgetter.undo_store.latest(user_key)
        return copy is not None and copy.expires_at > now

    # -- proposals -----------------------------------------------------------------------
    def decide(self, user_key: str, proposal_id: str, decision: Decision) -> Outcome:
        """The user's answer to a proposal, pressed on the page."""
        return self.answers.decide(user_key, proposal_id, decision, via="page")

    def edit_proposal(self, user_key: str, proposal_id: str, text: str) -> Outcome:
        """The user's new text for a waiting proposal."""
        try:
            return self.answers.edit(user_key, proposal_id, text, via="page")
        except Exception as exc:  # BackendError: a refusal already worded for the user
            raise ShapeError("as_is", text=str(exc)) from exc

    def import_file(self, user_key: str, name: str, data: bytes, now: datetime) -> ImportReport:
        """Propose every live memory of a Markdown or JSON file; nothing is written yet."""
        if len(data) > MAX_IMPORT_BYTES:
            raise ShapeError("too_large")
        try:
            text = data.decode("utf-8-sig")
            entries = _entries_of(name, text)
        except (UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
            raise ShapeError("import_bad") from exc
        proposed: list[str] = []
        refused: list[tuple[str, ShapeError]] = []
        for e in entries[:MAX_IMPORT_ENTRIES]:
            values = {k: getattr(e, k) for k in _IMPORTED}
            try:
                p = self.services.confirm.propose(
                    user_key, e.text, "import", section=e.section, now=now, fields=values
                )
            except ProposalRefusedError as exc:
                refused.append((mask(e.text)[:60], _refused(exc)))
                continue
            proposed.append(p.id)
        refused += [
            (mask(e.text)[:60], ShapeError("too_many_entries"))
            for e in entries[MAX_IMPORT_ENTRIES:]
        ]
        return ImportReport(proposed, refused)


def _entries_of(name: str, text: str) -> list[Entry]:
    """The live entries of an exported file: JSON (a list of records) or MEMORY.md."""
    stripped = text.lstrip()
    if name.lower().endswith(".json") or stripped.startswith(("[", "{")):
        data = json.loads(text)
        records = data.get("memories", []) if isinstance(data, dict) else data
        if not isinstance(records, list):
            raise ValueError("not a list of memories")
        out = []
        for r in records:
            if not isinstance(r, dict) or not str(r.get("text", "")).strip():
                raise ValueError("a record without text")
            known = {k: r[k] for k in (*_IMPORTED, "section", "status") if k in r}
            out.append(Entry(id=str(r.get("id", "")), text=str(r["text"]), **known))
        entries = out
    else:
        entries = list(parse_memory(text).entries)
    return [e for e in entries if e.status in LIVE]
