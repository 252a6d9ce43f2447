"""Confirmation as a service (docs/memory-lifecycle.md, "The write path").

``propose`` -> noise filter -> sensitive-data guard -> duplicate and conflict check ->
pending store. ``confirm`` writes the entry to MEMORY.md atomically, marks the proposal
confirmed, then indexes. Confirming, replacing, rejecting and editing each take a
:class:`~memory.write.consent.UserAct`: a proof, sealed by the bot layer's mint, that the user did
exactly that to exactly that proposal. Whoever holds this service without the mint (the agent
and the model's tools) can propose, never answer.

The entry id is derived from the proposal id, so a confirm repeated after a crash between the
Markdown write and the pending update finds the entry already written and does not add it
twice; a crash between the write and the indexing is repaired by the change detector (the
next search or sync indexes the new entry).

Text replies: :func:`parse_reply` recognises short confirm / reject answers in Chinese and
English (and "replace" / "add" for a conflicting proposal); anything else is an ordinary
message. Which proposal a word answers is the bot layer's decision, never this service's.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

from memory.base.guards import FORGOTTEN, mask, scan, secrets_in
from memory.base.markdown import ENFORCEMENT_LEVELS, MEMORY_CLASSES, Entry, MemoryStatus
from memory.base.sections import choose_section, known_section
from memory.errors import (
    DuplicateMemoryError,
    ForgottenTextError,
    InvalidProposalError,
    NoiseError,
    SensitiveDataError,
)

# Defined with the others in memory.errors; importers of the refusal's base find it here too.
from memory.errors import ProposalRefusedError as ProposalRefusedError
from memory.search.noise import noise_reason
from memory.store.service import MemoryService
from memory.write.consent import ActCheck, UserAct
from memory.write.emphasis import emphasis
from memory.write.governance import (
    LIVE,
    Governance,
    derive_summary,
    guess_class,
    summary_of,
    with_status,
)
from memory.write.pending import PendingStore
from memory.write.proposals import CONFIRMED, REJECTED, Proposal, entry_id_for

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 2000

_CONFIRM_WORDS = {
    "確認", "确认", "確定", "确定", "好", "好的", "好啊", "是", "是的", "對", "对", "對的", "可以",
    "記住", "记住", "yes", "y", "ok", "okay", "confirm", "sure", "yep", "save",
}  # fmt: skip
_REJECT_WORDS = {
    "取消", "不要", "否", "不", "不用", "算了", "no", "n", "nope", "cancel", "discard", "reject",
}  # fmt: skip
_REPLACE_WORDS = {"取代", "替換", "替换", "覆蓋", "覆盖", "更新", "replace", "update"}
_ADD_WORDS = {"新增", "增加", "都留", "保留", "add", "keep both", "keep"}
_PUNCT = re.compile(r"[\s\W_]+")

# Fields a proposer may set; everything else about an entry is derived.
ALLOWED_FIELDS = (
    "summary",
    "memory_class",
    "scope",
    "canonical_topic",
    "claims",
    "is_core",
    "enforcement_level",
    "user_weight",
    "importance",
)


def section_name(typed: str) -> str:
    """A section name as a person typed it: one line, without a heading's own ``#`` marks
    ("## Evil" names the section "Evil", not "## ## Evil"); "" when nothing is left."""
    return " ".join(typed.split()).lstrip("#").strip()


@dataclass(frozen=True, slots=True)
class ReplyIntent:
    """What a short text reply to a proposal means."""

    action: str  # "confirm" | "reject"
    replace: bool | None = None  # True: "replace", False: "add", None: not said


def parse_reply(text: str) -> ReplyIntent | None:
    """A short confirm / reject / replace / add answer, or None for an ordinary message."""
    key = _PUNCT.sub(" ", text.lower()).strip()
    if not key or len(key) > 12:
        return None
    if key in _CONFIRM_WORDS:
        return ReplyIntent("confirm")
    if key in _REJECT_WORDS:
        return ReplyIntent("reject")
    if key in _REPLACE_WORDS:
        return ReplyIntent("confirm", replace=True)
    if key in _ADD_WORDS:
        return ReplyIntent("confirm", replace=False)
    return None


def classify_reply(text: str) -> str | None:
    """``"confirm"``, ``"reject"`` or None (an ordinary message)."""
    intent = parse_reply(text)
    return intent.action if intent else None


def _finite(name: str, value: Any) -> float:
    """``value`` as a finite number ("7" and 7.0 are; "heavy", ``inf`` and True are not)."""
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise InvalidProposalError("refused_value", field=name)
    return number


def _clean_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value is None or value == "":
            continue
        if name not in ALLOWED_FIELDS:
            raise InvalidProposalError("refused_field", field=name)
        out[name] = value
    mc = out.get("memory_class")
    if mc is not None and mc not in MEMORY_CLASSES:
        raise InvalidProposalError("refused_class", allowed=tuple(map(str, MEMORY_CLASSES)))
    level = out.get("enforcement_level")
    if level is not None and level not in ENFORCEMENT_LEVELS:
        raise InvalidProposalError("refused_enforcement")
    if "scope" in out:
        out["scope"] = check_scope(str(out["scope"]))
    if "summary" in out:
        out["summary"] = str(out["summary"]).strip()[:50]
    if "user_weight" in out:
        out["user_weight"] = max(0, min(10, int(_finite("user_weight", out["user_weight"]))))
    if "importance" in out:
        out["importance"] = max(0.0, min(1.0, _finite("importance", out["importance"])))
    if "is_core" in out and not isinstance(out["is_core"], bool):
        raise InvalidProposalError("refused_value", field="is_core")
    if "claims" in out:
        out["claims"] = [str(c) for c in out["claims"]]
    return out


_SCOPE = re.compile(r"(global)|(project|lang):(\S+)", re.IGNORECASE)


def check_scope(value: str) -> str:
    """A scope as stored: ``global``, ``project:<name>`` or ``lang:<name>``."""
    m = _SCOPE.fullmatch(value.strip())
    if m is None:
        raise InvalidProposalError("refused_scope")
    return "global" if m.group(1) else f"{m.group(2).lower()}:{m.group(3)}"


class ConfirmationService:
    """Propose, confirm, edit and reject memories for their owner."""

    def __init__(
        self,
        memory: MemoryService,
        pending: PendingStore,
        governance: Governance,
        check: ActCheck,
    ) -> None:
        self.memory = memory
        self.store = pending
        self.governance = governance
        self._check = check

    # -- proposing ------------------------------------------------------------------------
    def check_text(
        self, user_key: str, text: str, *, replaces: Collection[str] = (), message: str = ""
    ) -> str:
        """Return the cleaned text, or raise a :class:`ProposalRefusedError` saying why.

        An entry named in ``replaces`` is not a duplicate: a new version may keep its text.
        ``message`` is what the user said when the proposal was made: a secret of it is
        refused in the text even without its keyword (a model may write "bank: hunter22").
        A text holding the forget marker ``[forgotten]`` is refused too.
        """
        text = text.strip()
        if len(text) > MAX_TEXT_CHARS:
            raise InvalidProposalError("refused_too_long", length=len(text), limit=MAX_TEXT_CHARS)
        if FORGOTTEN in text.casefold():
            # The mark a forget leaves where a copy was (a model may copy it from the history):
            # a memory made of it would be made of a forgotten one.
            raise ForgottenTextError()
        reason = noise_reason(text)
        if reason is not None:
            raise NoiseError(reason)
        kinds = [f.kind for f in scan(text)]
        if not kinds and message and mask(text, secrets_in(message)) != text:
            kinds = [f.kind for f in scan(message)]
        if kinds:
            raise SensitiveDataError(tuple(dict.fromkeys(kinds)))
        dup = self.governance.find_duplicate(user_key, text)
        if dup is not None and dup.id not in replaces:
            raise DuplicateMemoryError(dup.id)
        return text

    def _conflict(self, user_key: str, text: str, topic: str) -> tuple[tuple[str, ...], str]:
        """The ids of similar live memories, and the first three as ``id: summary; ...``."""
        conflicts = self.governance.find_conflicts(user_key, text, topic)
        if not conflicts:
            return (), ""
        shown = "; ".join(f"{e.id}: {summary_of(e)}" for e in conflicts[:3])
        return tuple(e.id for e in conflicts), shown

    def propose(
        self,
        user_key: str,
        text: str,
        source: str = "",
        *,
        section: str | None = None,
        now: datetime,
        fields: Mapping[str, Any] | None = None,
        replaces: Sequence[str] = (),
        message: str = "",
    ) -> Proposal:
        """Check ``text`` and store it as a proposal waiting for its owner's answer.

        "這很重要" / "this is important" in the text is the user's emphasis, not the fact: it is
        taken out and proposes a higher ``user_weight`` (:mod:`memory.write.emphasis`), unless
        ``fields`` already name one. ``replaces`` names the entries this one is a new version
        of (the library's ``update``): they are its conflicts, instead of those a search would
        find. ``message`` is the user's message the proposal came from (see :meth:`check_text`).
        """
        said = emphasis(text)
        text = self.check_text(user_key, said.text, replaces=replaces, message=message)
        # The text is refused when it holds a secret; the model's section and topic are masked.
        known = secrets_in(message) if message else frozenset()
        clean = {
            k: mask(v, known) if isinstance(v, str) else v
            for k, v in _clean_fields(fields or {}).items()
        }
        if said.weight is not None:
            clean.setdefault("user_weight", said.weight)
        if replaces:
            ids, shown = tuple(replaces), ""
        else:
            ids, shown = self._conflict(user_key, text, str(clean.get("canonical_topic", "")))
        sections = self.memory.document(user_key).sections
        typed = mask(section_name(section or ""), known)
        chosen = known_section(typed, sections) if typed else choose_section(text, sections)
        return self.store.add(
            user_key,
            text,
            now=now,
            section=chosen,
            source=source,
            fields=clean,
            conflict_ids=ids,
            conflicts_shown=shown,
        )

    def edit(self, act: UserAct, *, now: datetime) -> Proposal:
        """The user's new text for their proposal (same id, checked again, expiry restarted)."""
        act = self._check.verify(act, ("edit",))
        proposal = self.store.live(act.user_key, act.proposal_id, now)
        text = self.check_text(act.user_key, act.text)
        topic = str(proposal.fields.get("canonical_topic", ""))
        ids, shown = self._conflict(act.user_key, text, topic)
        edited = self.store.update_text(
            act.user_key, proposal.id, text, now=now, conflict_ids=ids, conflicts_shown=shown
        )
        self.governance.note_final(act.user_key, "proposal_edit", now)
        return edited

    def pending(self, user_key: str, now: datetime | None = None) -> list[Proposal]:
        """The user's proposals still waiting, oldest first."""
        return self.store.pending(user_key, now)

    def expire_due(self, now: datetime) -> list[Proposal]:
        """The expiry job: drop proposals past their expiry, each returned exactly once."""
        return self.store.expire_due(now)

    # -- answering ------------------------------------------------------------------------
    def confirm(self, act: UserAct, *, now: datetime, index: bool = True) -> Entry:
        """Write the proposal the user confirmed to MEMORY.md and index it; returns the entry.

        ``act`` is the user's "confirm" or "replace". For a proposal that conflicts with
        existing memories, "replace" deprecates them and links ``supersedes``; "confirm" adds
        the new entry beside them (nothing is lost). ``index=False`` leaves indexing to the
        change detector (batch writers use it).
        """
        act = self._check.verify(act, ("confirm", "replace"))

        def write() -> Entry:
            proposal = self.store.live(act.user_key, act.proposal_id, now)
            entry = self._write(act.user_key, proposal, act.action == "replace", now)
            self.store.resolve(proposal.id, CONFIRMED, now=now, entry_id=entry.id)
            return entry

        with self.memory.lock(act.user_key):
            # A typed /remember or `pcai remember` (the command made the proposal and answers
            # it) notes what it made itself, for /undo (agent/forget.py). Any other answer to
            # a proposal, a typed /confirm included, is an act /undo can take back.
            source = self.store.live(act.user_key, act.proposal_id, now).source
            if act.via in ("command", "operator") and source in ("command", "operator"):
                entry = write()
            else:
                proposal = {"proposal": act.proposal_id}
                entry = self.governance.noting(act.user_key, "confirm", now, write, proposal)
        log.info(
            "%s: %s confirmed by the user (%s) as %s",
            act.user_key,
            act.proposal_id,
            act.via,
            entry.id,
        )
        if index:
            try:
                self.memory.index_memory(act.user_key)
            except Exception:  # the Markdown is written; the change detector indexes it later
                log.warning("indexing %s after confirm failed", entry.id, exc_info=True)
        return entry

    def _write(self, user_key: str, proposal: Proposal, replace_old: bool, now: datetime) -> Entry:
        doc = self.memory.document(user_key)
        entry_id = entry_id_for(proposal)
        existing = doc.by_id().get(entry_id)
        if existing is not None:
            return existing  # written before a crash; only the pending row was left behind
        entry = self._entry(proposal, entry_id, now)
        if replace_old:
            live = doc.by_id()
            olds = [live[i] for i in proposal.conflict_ids if i in live and live[i].status in LIVE]
            reason = f"replaced by {entry_id}"
            for old in olds:
                doc = doc.with_entry(with_status(old, MemoryStatus.DEPRECATED, now, reason))
            if olds:
                topic = entry.canonical_topic or next(
                    (o.canonical_topic for o in olds if o.canonical_topic), ""
                )
                entry = replace(entry, supersedes=tuple(o.id for o in olds), canonical_topic=topic)
        self.memory.write_document(user_key, doc.with_entry(entry), index=False)
        if entry.supersedes:
            self.governance.inherit_use(user_key, entry.id, entry.supersedes)
        return entry

    @staticmethod
    def _entry(proposal: Proposal, entry_id: str, now: datetime) -> Entry:
        values: dict[str, Any] = dict(proposal.fields)
        for name in ("claims",):
            if name in values:
                values[name] = tuple(values[name])
        values.setdefault("summary", derive_summary(proposal.text))
        values.setdefault("memory_class", guess_class(proposal.text))
        known = {f.name for f in fields(Entry)}
        return Entry(
            id=entry_id,
            text=proposal.text,
            section=proposal.section or "General",
            created_at=now.isoformat(timespec="seconds"),
            **{k: v for k, v in values.items() if k in known},
        )

    def reject(self, act: UserAct, *, now: datetime) -> Proposal:
        """Discard the proposal the user rejected; nothing is written."""
        act = self._check.verify(act, ("reject",))
        proposal = self.store.live(act.user_key, act.proposal_id, now)
        self.store.resolve(proposal.id, REJECTED, now=now)
        self.governance.note_final(act.user_key, "discard", now)
        return self.store.get(act.user_key, proposal.id)
