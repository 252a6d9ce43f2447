"""The memory and reminder tools bound to one user and one turn (what ``agent.tools`` runs).

``memory_save`` only ever creates a pending proposal, ``reminder_create`` a reminder
proposal. No tool confirms,
replaces or rejects: answering a proposal takes a proof of the user's own act that only the
bot layer can make (:mod:`memory.write.consent`), and these tools have none. In a group no memory
tool is offered at all.

A call runs once per turn (:mod:`agent.turn.calls`, through the turn's :class:`ToolBox`). The
proposals carry their message's id, so the same message answered again (a replay after a
crash or a stop, in this process or the next) finds the proposal it made and shows that one
instead of making a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent.memory_view import said_on
from agent.reminders.errors import ReminderError
from agent.reminders.service import ReminderService
from agent.texts import conflict_note, error_text, say
from agent.tools import ToolBox
from agent.types import ProposalView, ReminderView
from memory.base.tokens import TokenCounter
from memory.errors import ProposalRefusedError
from memory.store.service import MemoryService
from memory.write.decisions import ConfirmationService
from memory.write.emphasis import emphasis, model_weight
from memory.write.governance import Governance
from memory.write.proposals import Proposal

SEARCH_LIMIT_MAX = 10
RESULT_TEXT_TOKENS = 400  # one search result as the model sees it


def proposal_view(p: Proposal) -> ProposalView:
    """A pending proposal as the transport shows it."""
    return ProposalView(
        proposal_id=p.id,
        text=p.text,
        section=p.section,
        expires_at=p.expires_at,
        conflicts_shown=p.conflicts_shown,
        weight=int(p.fields.get("user_weight", 0)),
        scope=str(p.fields.get("scope", "")),
    )


@dataclass(slots=True)
class TurnTools:
    """The handlers of one turn, and the proposals the model made during it."""

    user_key: str
    now: datetime
    language: str
    message_id: str
    memory: MemoryService
    confirm: ConfirmationService
    governance: Governance
    counter: TokenCounter
    reminders: ReminderService | None = None
    proposals: list[Proposal] = field(default_factory=list)
    user_text: str = ""  # the user's message: their "這很重要" sets the weight, not the model's
    refusals: list[str] = field(default_factory=list)  # why memory_save refused, as told
    reminder_views: list[ReminderView] = field(default_factory=list)

    def toolbox(self) -> ToolBox:
        """The tools bound to this turn: propose, search, read history; propose reminders."""
        handlers = {
            "memory_save": self.save,
            "memory_search": self.search,
            "memory_archaeology": self.archaeology,
        }
        if self.reminders is not None:
            handlers["reminder_create"] = self.reminder_create
        return ToolBox(handlers)

    @property
    def source(self) -> str:
        """Where this turn's proposals come from: its message (``chat:<id>``)."""
        return f"chat:{self.message_id}" if self.message_id else "chat"

    async def save(self, args: dict[str, Any]) -> Mapping[str, Any]:
        """memory_save: a pending proposal the user must confirm; nothing is written."""
        raw = str(args["text"])
        said = {raw.strip(), emphasis(raw).text.strip()}  # as the proposal stores it
        same = next((p for p in self.proposals if p.text in said), None)
        if same is None and self.message_id:  # the same message answered again (a replay)
            same = await asyncio.to_thread(self._proposed, said)
            if same is not None:
                self.proposals.append(same)
        if same is not None:  # a small model repeating its call gets the same proposal
            return {"status": "pending_confirmation", "proposal_id": same.id}
        fields: dict[str, Any] = {"canonical_topic": args["topic"]} if args.get("topic") else {}
        if args.get("scope"):
            fields["scope"] = args["scope"]  # checked (and refused if malformed) by propose
        weight = emphasis(self.user_text).weight or model_weight(args.get("weight"))
        if weight is not None:
            fields["user_weight"] = weight
        try:
            proposal = await asyncio.to_thread(
                self.confirm.propose,
                self.user_key,
                str(args["text"]),
                self.source,
                section=args.get("section") or None,
                now=self.now,
                fields=fields,
                message=self.user_text,  # a secret the user said is refused in any wording
            )
        except ProposalRefusedError as exc:
            reason = error_text(exc, self.language)
            self.refusals.append(reason)
            return {"status": "refused", "reason": reason}
        self.proposals.append(proposal)
        out: dict[str, Any] = {
            "status": "pending_confirmation",
            "proposal_id": proposal.id,
            "note": "Not saved yet: the user confirms, edits or discards it themselves.",
        }
        if proposal.conflicts_shown:
            out["conflict"] = conflict_note(proposal.conflicts_shown, self.language)
        return out

    def _proposed(self, said: set[str]) -> Proposal | None:
        """This message's proposal of that text, still waiting (made before a crash)."""
        waiting = self.confirm.pending(self.user_key, self.now)
        return next((p for p in waiting if p.source == self.source and p.text in said), None)

    async def search(self, args: dict[str, Any]) -> Mapping[str, Any]:
        """memory_search: the user's own memories, logs and summaries."""
        limit = max(1, min(SEARCH_LIMIT_MAX, int(args.get("limit") or 5)))
        hits = await asyncio.to_thread(
            self.memory.search, self.user_key, str(args["query"]), limit
        )
        return {
            "results": [
                {
                    "id": h.chunk.unit_id,
                    "text": self.counter.truncate(h.chunk.text, RESULT_TEXT_TOKENS),
                    "score": round(h.score, 3),
                    "source": h.chunk.path,
                    "date": h.chunk.date,
                    # A log line is what was said that day, not a memory the user kept.
                    "kind": "said in conversation" if said_on(h.chunk) else str(h.chunk.kind),
                }
                for h in hits
            ]
        }

    async def archaeology(self, args: dict[str, Any]) -> Mapping[str, Any]:
        """memory_archaeology: a memory's supersedes chain and history lines."""
        ref = str(args.get("memory_id") or args.get("topic") or "").strip()
        if not ref:
            return {"error": "give memory_id or topic"}
        chain = await asyncio.to_thread(self.governance.archaeology, self.user_key, ref)
        if not chain:
            return {"results": [], "note": f"no memory matches {ref!r}"}
        return {
            "results": [
                {
                    "id": e.id,
                    "text": e.text,
                    "status": e.status,
                    "created": e.created_at,
                    "supersedes": list(e.supersedes),
                    "history": list(e.history),
                }
                for e in chain
            ]
        }

    async def reminder_create(self, args: dict[str, Any]) -> Mapping[str, Any]:
        """reminder_create: a reminder proposal the user must confirm; nothing is scheduled."""
        assert self.reminders is not None  # offered only with a reminder service
        try:
            row = await asyncio.to_thread(
                self.reminders.propose_iso,
                self.user_key,
                str(args["when"]),
                str(args["text"]),
                str(args.get("recurrence") or "") or None,
                # Named by its message: the same message answered again proposes it once.
                f"tool:{self.message_id}" if self.message_id else "tool",
            )
        except ReminderError as exc:
            return {"status": "refused", "reason": exc.text(self.language)}
        view = self.reminders.view(row)
        if all(v.reminder_id != row.id for v in self.reminder_views):  # one card per row
            self.reminder_views.append(view)
        return {
            "status": "pending_confirmation",
            "reminder_id": row.number,  # what the person sees on the card
            "understood": say(
                "reminder_understood",
                self.language,
                understood_zh=view.understood_zh,
                understood_en=view.understood_en,
            ),
            "note": "Not set yet: the user confirms or discards it themselves.",
        }
