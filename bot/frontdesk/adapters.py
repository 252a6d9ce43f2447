"""Adapters from the memory write path to the bot's ports (confirm flow, curation, forget,
history)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agent.forget import Forgetter
from agent.texts import LANGUAGES, CodedError, error_text
from agent.turn.tools import proposal_view
from agent.types import ProposalView
from bot.frontdesk.desk import history_lines
from bot.frontdesk.ports import BackendError, Decision, MemoryLine, Outcome, Via
from memory.base.markdown import Entry
from memory.errors import (
    EntryNotFoundError,
    EntryNotLiveError,
    ProposalExpiredError,
    ProposalNotFoundError,
    ProposalRefusedError,
    ProposalResolvedError,
)
from memory.write.consent import Action, UserActMint
from memory.write.curation import Curation
from memory.write.decisions import ConfirmationService
from memory.write.governance import Governance
from memory.write.proposals import Proposal


def _now() -> datetime:
    return datetime.now().astimezone()


def view_of(p: Proposal) -> ProposalView:
    """The transport's view of a stored proposal."""
    return proposal_view(p)


def line_of(e: Entry) -> MemoryLine:
    """One memory as a front end lists it."""
    return MemoryLine(e.id, e.text, e.section, e.status, e.is_core, e.user_weight, e.scope)


def coded(exc: CodedError) -> BackendError:
    """``exc`` as a :class:`BackendError` holding its sentence in every language (the reader's
    is picked by :meth:`~bot.errors.BackendError.said`)."""
    return BackendError(error_text(exc, "en"), {lang: error_text(exc, lang) for lang in LANGUAGES})


class ConfirmAdapter:
    """:class:`~bot.frontdesk.backend.Confirmations` over :class:`ConfirmationService`.

    It holds the process's :class:`UserActMint` (the composition root hands it to the bot
    layer only) and seals each answer a front end reports from a user event.
    """

    def __init__(self, service: ConfirmationService, acts: UserActMint) -> None:
        self.service = service
        self._acts = acts

    def propose(self, user_key: str, text: str, now: datetime) -> ProposalView:
        """Check and queue; a refusal (secret, noise, duplicate) becomes one sentence."""
        try:
            return view_of(self.service.propose(user_key, text, "command", now=now))
        except ProposalRefusedError as exc:
            raise coded(exc) from exc

    def decide(self, user_key: str, proposal_id: str, decision: Decision, *, via: Via) -> Outcome:
        """Confirm (writes MEMORY.md) or reject; expiry and unknown ids are outcomes."""
        now = _now()
        act = self._acts.act(user_key, proposal_id, decision, via=via)
        try:
            if decision != "reject":
                proposal = self.service.store.live(user_key, proposal_id, now)
                entry = self.service.confirm(act, now=now)  # "confirm" adds beside a conflict
                return Outcome("confirmed", proposal.text, entry.id, replaced=entry.supersedes)
            rejected = self.service.reject(act, now=now)
            return Outcome("rejected", rejected.text)
        except ProposalExpiredError:
            return Outcome("expired")
        except (ProposalNotFoundError, ProposalResolvedError):
            return Outcome("missing")

    def edit(self, user_key: str, proposal_id: str, text: str, *, via: Via) -> Outcome:
        """New text, same id, expiry restarted."""
        act = self._acts.act(user_key, proposal_id, "edit", via=via, text=text)
        try:
            p = self.service.edit(act, now=_now())
        except ProposalExpiredError:
            return Outcome("expired")
        except (ProposalNotFoundError, ProposalResolvedError):
            return Outcome("missing")
        except ProposalRefusedError as exc:
            raise coded(exc) from exc
        return Outcome("edited", p.text, proposal=view_of(p))

    def pending(self, user_key: str) -> Sequence[ProposalView]:
        """Live proposals, oldest first."""
        return [view_of(p) for p in self.service.pending(user_key, _now())]

    def attach(self, user_key: str, proposal_id: str, message_id: str) -> None:
        """Record the message showing the proposal."""
        self.service.store.attach_message(user_key, proposal_id, message_id)

    def proposal_for_message(self, user_key: str, message_id: str) -> str | None:
        """The proposal shown in that message."""
        p = self.service.store.by_message(user_key, message_id)
        return p.id if p else None


class CurationAdapter:
    """:class:`~bot.frontdesk.ports.Curations` over :class:`Curation`, sealing each user act.

    Like :class:`ConfirmAdapter` it holds the mint: pinning, editing, keeping and restoring
    a confirmed memory are the user's decisions, made only through a front end.
    """

    def __init__(self, service: ConfirmationService, acts: UserActMint) -> None:
        self.curation = Curation(service, acts.check)
        self._acts = acts

    def _do(
        self,
        user_key: str,
        entry_id: str,
        action: Action,
        via: Via,
        text: str = "",
        count: bool = True,
    ) -> MemoryLine:
        """Seal the act and run it; a done act counts one use unless ``count`` is False."""
        act = self._acts.act(user_key, entry_id, action, via=via, text=text)
        run = {
            "pin": self.curation.pin,
            "unpin": self.curation.pin,
            "scope": self.curation.scope,
            "revise": self.curation.revise,
            "keep": self.curation.keep,
            "restore": self.curation.restore,
        }[action]
        try:
            return line_of(run(act, now=_now(), count=count))
        except (EntryNotFoundError, EntryNotLiveError, ProposalRefusedError) as exc:
            # an unknown or archived memory, a new text or scope the guards refuse
            raise coded(exc) from exc

    def pin(
        self, user_key: str, entry_id: str, core: bool, *, via: Via, count: bool = True
    ) -> MemoryLine:
        """Pin or unpin."""
        return self._do(user_key, entry_id, "pin" if core else "unpin", via, count=count)

    def set_scope(
        self, user_key: str, entry_id: str, scope: str, *, via: Via, count: bool = True
    ) -> MemoryLine:
        """A new scope (checked)."""
        return self._do(user_key, entry_id, "scope", via, scope, count)

    def revise(
        self, user_key: str, entry_id: str, text: str, *, via: Via, count: bool = True
    ) -> MemoryLine:
        """A new version that supersedes the memory (guards apply)."""
        return self._do(user_key, entry_id, "revise", via, text, count)

    def keep(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Keep a fading memory."""
        return self._do(user_key, entry_id, "keep", via)

    def restore(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Bring an archived memory back."""
        return self._do(user_key, entry_id, "restore", via)

    def archived(self, user_key: str) -> Sequence[MemoryLine]:
        """Archived memories, most recently archived first."""
        return [line_of(e) for e in self.curation.archived(user_key)]


class GovernanceKeeper:
    """Forget, undo and archaeology over :class:`Governance` and the :class:`Forgetter`."""

    def __init__(self, governance: Governance, forgetter: Forgetter) -> None:
        self.governance = governance
        self.forgetter = forgetter

    async def forget(self, user_key: str, memory_id: str, lang: str = "en") -> str:
        """Delete the memory and redact its text from the user's logs, summaries, session."""
        said = await self.forgetter.forget(user_key, memory_id, now=_now(), lang=lang)
        if said.error:
            raise BackendError(said.text)
        return said.text

    async def undo(self, user_key: str, lang: str = "en", made: str = "") -> str:
        """Take back the user's last forget, typed /remember or /remind, within the window."""
        said = await self.forgetter.undo(user_key, now=_now(), lang=lang, made=made)
        if said.error:
            raise BackendError(said.text)
        return said.text

    def note_made(self, user_key: str, made: str) -> int:
        """A typed /remember or /remind was done at once: note it for /undo (its minutes)."""
        return self.forgetter.note_made(user_key, made, _now())

    def archaeology(self, user_key: str, topic: str, lang: str = "en") -> str:
        """The supersedes timelines the topic is about (by id, topic or meaning)."""
        return history_lines(topic, self.governance.history(user_key, topic), lang)

    async def flush(self) -> None:
        """Pending proposals live in SQLite (committed per change): nothing is held back."""
