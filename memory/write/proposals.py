"""Proposals as values: a proposed memory, its status, and the id its confirmed entry gets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memory.errors import UnreadableFileError


class ProposalStatus(StrEnum):
    """Where a proposal is: waiting, or answered (confirmed / rejected) or expired."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    EXPIRED = "expired"


PENDING = ProposalStatus.PENDING
CONFIRMED = ProposalStatus.CONFIRMED
REJECTED = ProposalStatus.REJECTED
EXPIRED = ProposalStatus.EXPIRED


@dataclass(frozen=True, slots=True)
class Proposal:
    """A memory waiting for confirmation."""

    id: str
    user_key: str
    text: str
    section: str
    source: str
    created_at: datetime
    expires_at: datetime
    status: ProposalStatus = PENDING
    fields: Mapping[str, Any] = field(default_factory=dict)
    conflict_ids: tuple[str, ...] = ()
    conflicts_shown: str = ""  # "id: summary; ..." of the first similar ones (the edge says it)
    message_id: str = ""
    entry_id: str = ""

    @property
    def has_conflict(self) -> bool:
        """True when an active memory on the same topic exists ("add or replace?")."""
        return bool(self.conflict_ids)


@dataclass(frozen=True, slots=True)
class Reconciled:
    """What :meth:`PendingStore.reconcile` found."""

    confirmed: tuple[Proposal, ...] = ()  # written before a crash; now marked confirmed
    # Users whose MEMORY.md cannot be read: their rows were left as they were.
    unreadable: Mapping[str, UnreadableFileError] = field(default_factory=dict)


def entry_id_for(proposal: Proposal) -> str:
    """The id the confirmed entry gets: fixed by the proposal, so a retry cannot duplicate."""
    return f"m-{proposal.created_at:%Y%m%d}-{proposal.id.removeprefix('p-')}"
