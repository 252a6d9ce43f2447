"""Confirmation as a service (seed 004 §2-3.1, DESIGN.md "Write path").

``propose`` -> noise filter -> sensitive-data guard -> duplicate and conflict check ->
pending store. ``confirm`` writes the entry to MEMORY.md atomically, marks the proposal
confirmed, then indexes. The entry id is derived from the proposal id, so a confirm repeated
after a crash between the Markdown write and the pending update finds the entry already
written and does not add it twice; a crash between the write and the indexing is repaired by
the change detector (the next search or sync indexes the new entry).

Text replies: :func:`parse_reply` recognises short confirm / reject answers in Chinese and
English (and "replace" / "add" for a conflicting proposal); anything else is an ordinary
message.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

from memory.errors import MemoryStoreError
from memory.governance import (
    LIVE,
    Governance,
    choose_section,
    derive_summary,
    guess_class,
    summary_of,
    with_status,
)
from memory.guards import refusal_reason, scan
from memory.markdown import ENFORCEMENT_LEVELS, MEMORY_CLASSES, Entry
from memory.noise import noise_reason
from memory.pending import (  # entry_id_for: the crash-window reconcile needs it there
    CONFIRMED,
    REJECTED,
    PendingStore,
    Proposal,
    ProposalNotFoundError,
    entry_id_for,
)
from memory.service import MemoryService

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


class ProposalRefusedError(MemoryStoreError):
    """The text will not be proposed; ``reason_en`` / ``reason_zh`` say why in one sentence."""

    def __init__(self, kind: str, reason_en: str, reason_zh: str) -> None:
        super().__init__(f"{reason_zh} {reason_en}")
        self.kind = kind
        self.reason_en = reason_en
        self.reason_zh = reason_zh


class SensitiveDataError(ProposalRefusedError):
    """The text contains a password, key, card or id number."""


class NoiseError(ProposalRefusedError):
    """The text is a greeting, a refusal, a meta-question or too short to be a memory."""


class DuplicateMemoryError(ProposalRefusedError):
    """The same text is already an active memory."""


class InvalidProposalError(ProposalRefusedError):
    """A field value is not one the schema allows."""


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


def _clean_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value is None or value == "":
            continue
        if name not in ALLOWED_FIELDS:
            raise InvalidProposalError(
                "field", f"Unknown memory field {name!r}.", f"不認得的記憶欄位 {name!r}。"
            )
        out[name] = value
    mc = out.get("memory_class")
    if mc is not None and mc not in MEMORY_CLASSES:
        raise InvalidProposalError(
            "field", f"memory_class must be one of {MEMORY_CLASSES}.", "memory_class 不正確。"
        )
    level = out.get("enforcement_level")
    if level is not None and level not in ENFORCEMENT_LEVELS:
        raise InvalidProposalError(
            "field", "enforcement_level must be soft or hard.", "enforcement_level 不正確。"
        )
    scope = out.get("scope")
    if scope is not None and not re.fullmatch(r"global|(?:project|lang):\S+", str(scope)):
        raise InvalidProposalError(
            "field", "scope must be global, project:<name> or lang:<name>.", "scope 不正確。"
        )
    if "summary" in out:
        out["summary"] = str(out["summary"]).strip()[:50]
    if "user_weight" in out:
        out["user_weight"] = max(0, min(10, int(out["user_weight"])))
    if "importance" in out:
        out["importance"] = max(0.0, min(1.0, float(out["importance"])))
    if "claims" in out:
        out["claims"] = [str(c) for c in out["claims"]]
    return out


def expiry_notice(proposal: Proposal) -> str:
    """The one notice its owner gets when a proposal expires unanswered."""
    short = proposal.text if len(proposal.text) <= 40 else proposal.text[:39] + "…"
    return (
        f"這條待確認的記憶已過期，沒有儲存：「{short}」。"
        f" The proposed memory expired unconfirmed and was not saved: “{short}”."
    )


class ConfirmationService:
    """Propose, confirm, edit and reject memories for their owner."""

    def __init__(
        self, memory: MemoryService, pending: PendingStore, governance: Governance
    ) -> None:
        self.memory = memory
        self.store = pending
        self.governance = governance

    # -- proposing ------------------------------------------------------------------------
    def check_text(self, user_key: str, text: str) -> str:
        """Return the cleaned text, or raise a :class:`ProposalRefusedError` saying why."""
        text = text.strip()
        if len(text) > MAX_TEXT_CHARS:
            raise InvalidProposalError(
                "too_long",
                f"Too long for one memory ({len(text)} characters, at most {MAX_TEXT_CHARS}).",
                f"太長了，一條記憶最多 {MAX_TEXT_CHARS} 字。",
            )
        reason = noise_reason(text)
        if reason is not None:
            raise NoiseError(
                reason,
                f"Not saved: that reads as {reason.replace('_', ' ')}, not something to remember.",
                "不會記住：這看起來是閒聊或太短的內容，不是需要記住的資訊。",
            )
        findings = scan(text)
        if findings:
            en, zh = refusal_reason(findings)
            raise SensitiveDataError(findings[0].kind, en, zh)
        dup = self.governance.find_duplicate(user_key, text)
        if dup is not None:
            raise DuplicateMemoryError(
                "duplicate",
                f"I already remember that ({dup.id}).",
                f"這條已經記住了（{dup.id}）。",
            )
        return text

    def _conflict(self, user_key: str, text: str, topic: str) -> tuple[tuple[str, ...], str]:
        conflicts = self.governance.find_conflicts(user_key, text, topic)
        if not conflicts:
            return (), ""
        shown = "; ".join(f"{e.id}: {summary_of(e)}" for e in conflicts[:3])
        note = (
            f"Similar memory exists ({shown}). Add as new, or replace it? "
            f"已有相近的記憶（{shown}）。要新增，還是取代？"
        )
        return tuple(e.id for e in conflicts), note

    def propose(
        self,
        user_key: str,
        text: str,
        source: str = "",
        *,
        section: str | None = None,
        now: datetime,
        fields: Mapping[str, Any] | None = None,
    ) -> Proposal:
        """Check ``text`` and store it as a proposal waiting for its owner's answer."""
        text = self.check_text(user_key, text)
        clean = _clean_fields(fields or {})
        ids, note = self._conflict(user_key, text, str(clean.get("canonical_topic", "")))
        chosen = (section or "").strip() or choose_section(
            text, self.memory.document(user_key).sections
        )
        return self.store.add(
            user_key,
            text,
            now=now,
            section=chosen,
            source=source,
            fields=clean,
            conflict_ids=ids,
            conflict_note=note,
        )

    def edit(self, user_key: str, proposal_id: str, new_text: str, *, now: datetime) -> Proposal:
        """Replace a proposal's text (same id, checked again, expiry restarted)."""
        proposal = self.store.live(user_key, proposal_id, now)
        text = self.check_text(user_key, new_text)
        topic = str(proposal.fields.get("canonical_topic", ""))
        ids, note = self._conflict(user_key, text, topic)
        return self.store.update_text(
            user_key, proposal.id, text, now=now, conflict_ids=ids, conflict_note=note
        )

    def pending(self, user_key: str, now: datetime | None = None) -> list[Proposal]:
        """The user's proposals still waiting, oldest first."""
        return self.store.pending(user_key, now)

    def resolve_ref(
        self, user_key: str, ref: str = "", *, reply_to: str = "", now: datetime
    ) -> Proposal:
        """The proposal a confirm/reject refers to: an id, the message replied to, or the latest.

        A bare "ok" with no id and no replied-to message means the user's newest live
        proposal; with none waiting it raises :class:`ProposalNotFoundError`.
        """
        ref = ref.strip()
        if ref.startswith("p-"):
            return self.store.live(user_key, ref.split()[0], now)
        if ref:
            raise ProposalNotFoundError(f"{ref[:40]!r} is not a proposal id. 這不是待確認的編號。")
        if reply_to:
            shown = self.store.by_message(user_key, reply_to)
            if shown is not None:
                return self.store.live(user_key, shown.id, now)
        waiting = self.store.pending(user_key, now)
        if not waiting:
            raise ProposalNotFoundError(
                "There is no memory waiting for your confirmation. 目前沒有等待確認的記憶。"
            )
        return waiting[-1]

    def expire_due(self, now: datetime) -> list[Proposal]:
        """The expiry job: drop proposals past their expiry, each returned exactly once."""
        return self.store.expire_due(now)

    # -- answering ------------------------------------------------------------------------
    def confirm(
        self,
        user_key: str,
        ref: str = "",
        *,
        replace: bool | None = None,
        now: datetime,
        reply_to: str = "",
        index: bool = True,
    ) -> Entry:
        """Write the proposal to MEMORY.md and index it; returns the new entry.

        ``ref`` is a proposal id or the text of a reply ("好", "replace"). For a proposal
        that conflicts with existing memories, ``replace=True`` deprecates them and links
        ``supersedes``; False or None adds the new entry beside them (nothing is lost).
        ``index=False`` leaves indexing to the change detector (batch writers use it).
        """
        intent = parse_reply(ref)
        if intent is not None:
            if intent.action != "confirm":
                raise ValueError("that reply rejects the proposal: call reject()")
            replace = intent.replace if replace is None else replace
            ref = ""
        with self.memory.lock(user_key):
            proposal = self.resolve_ref(user_key, ref, reply_to=reply_to, now=now)
            entry = self._write(user_key, proposal, bool(replace), now)
            self.store.resolve(proposal.id, CONFIRMED, now=now, entry_id=entry.id)
        if index:
            try:
                self.memory.index_memory(user_key)
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
                doc = doc.with_entry(with_status(old, "deprecated", now, reason))
            if olds:
                topic = entry.canonical_topic or next(
                    (o.canonical_topic for o in olds if o.canonical_topic), ""
                )
                entry = replace(entry, supersedes=tuple(o.id for o in olds), canonical_topic=topic)
        self.memory.write_document(user_key, doc.with_entry(entry), index=False)
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

    def reject(
        self, user_key: str, ref: str = "", *, now: datetime, reply_to: str = ""
    ) -> Proposal:
        """Discard a proposal; nothing is written."""
        if parse_reply(ref) is not None:
            ref = ""
        proposal = self.resolve_ref(user_key, ref, reply_to=reply_to, now=now)
        self.store.resolve(proposal.id, REJECTED, now=now)
        return self.store.get(user_key, proposal.id)
