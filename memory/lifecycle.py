"""Memory health and the nightly lifecycle (seed 002 §4).

Scores are pure functions with the seed's formulas. Days are whole days, as in the seed's
``recency_decay`` example (``(now - created).days``), and the decay rate is the seed's
``0.693 / half_life_days``. An entry without a readable ``created`` (a bullet a person typed
by hand) counts as new: the job never retires what it cannot date.

The nightly job moves each entry to the status its health calls for and records the change
in MEMORY.md (``status``, ``status_changed``, a ``history:`` line):

    health >= 0.3          -> active
    0.15 <= health < 0.3   -> low_priority   (still retrieved, ranked lower)
    health < 0.15          -> archived       (no longer retrieved)
    archived over 60 days  -> deleted from MEMORY.md and the index

Core memories (``is_core`` or ``user_weight >= 9``) and deprecated versions in a supersedes
chain are never touched. Every step is reversible until deletion: :meth:`Governance.restore`
(or editing the status line) makes an entry active again, and the job then leaves it alone for
``restore_grace_days`` so a restore is not undone the next night.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal

from memory.access import AccessCounter, AccessStat
from memory.config import LifecycleConfig
from memory.governance import with_status
from memory.markdown import Entry, MemoryStatus
from memory.service import MemoryService
from memory.users import list_user_keys

log = logging.getLogger(__name__)

SEED_LN2 = 0.693  # the seed's ln(2)
CORE_MIN_WEIGHT = 9
# Not a status an entry is written with: the nightly job removes the entry.
DELETED: Final = "deleted"
# What the nightly job can move an entry to.
Fate = MemoryStatus | Literal["deleted"]


def recency_decay(days_old: float, half_life_days: float = 14.0) -> float:
    """``exp(-(0.693 / half_life_days) * days_old)``: 1.0 today, 0.5 after 14 days."""
    return math.exp(-(SEED_LN2 / half_life_days) * max(days_old, 0.0))


def access_frequency(access_count: int, saturation: int = 20) -> float:
    """``min(access_count / 20, 1)``."""
    return min(access_count / saturation, 1.0)


def weight_factor(user_weight: int) -> float:
    """``user_weight / 10`` (0-10 normalised to 0-1)."""
    return max(0, min(10, user_weight)) / 10.0


def retrieval_score(relevance: float, recency: float, frequency: float, weight: float) -> float:
    """Scene A: ``0.4*relevance + 0.25*recency_decay + 0.2*access_frequency + 0.15*weight``."""
    return 0.4 * relevance + 0.25 * recency + 0.2 * frequency + 0.15 * weight


def health_score(recency: float, frequency: float, weight: float) -> float:
    """Scene B: ``0.4*recency_decay + 0.35*access_frequency + 0.25*user_weight``."""
    return 0.4 * recency + 0.35 * frequency + 0.25 * weight


def days_between(start_iso: str, now: datetime) -> int:
    """Whole days from ``start_iso`` to ``now``; 0 when the time is missing or unreadable."""
    try:
        start = datetime.fromisoformat(start_iso)
    except ValueError:
        return 0
    if start.tzinfo is None:
        start = start.replace(tzinfo=now.tzinfo)
    return max((now - start).days, 0)


def is_core(entry: Entry) -> bool:
    """Layer 0 (seed 002 §2): ``is_core`` or ``user_weight >= 9``."""
    return entry.is_core or entry.user_weight >= CORE_MIN_WEIGHT


def entry_health(entry: Entry, stat: AccessStat, now: datetime, config: LifecycleConfig) -> float:
    """The health score of one entry as of ``now``."""
    return health_score(
        recency_decay(days_between(entry.created_at, now), config.recency_half_life_days),
        access_frequency(stat.count, config.access_saturation),
        weight_factor(entry.user_weight),
    )


def status_for_health(health: float, config: LifecycleConfig) -> MemoryStatus:
    """The status a health score calls for."""
    if health < config.archive_below:
        return MemoryStatus.ARCHIVED
    if health < config.low_priority_below:
        return MemoryStatus.LOW_PRIORITY
    return MemoryStatus.ACTIVE


def next_status(
    entry: Entry, health: float, now: datetime, config: LifecycleConfig
) -> Fate | None:
    """The status the nightly job moves ``entry`` to (``"deleted"`` included), or None."""
    if is_core(entry) or entry.status == MemoryStatus.DEPRECATED:
        return None
    since_change = days_between(entry.status_changed_at or entry.created_at, now)
    if entry.status == MemoryStatus.ARCHIVED and since_change > config.delete_archived_after_days:
        return DELETED
    restored = bool(entry.history) and entry.history[-1].endswith(": restored")
    if restored and since_change < config.restore_grace_days:
        return None
    target = status_for_health(health, config)
    return target if target != entry.status else None


@dataclass(frozen=True, slots=True)
class Change:
    """One status change the job made."""

    user_key: str
    entry_id: str
    old: str  # as written in MEMORY.md
    new: Fate
    health: float


@dataclass(frozen=True, slots=True)
class LifecycleReport:
    """What one run of the nightly job changed."""

    changes: list[Change] = field(default_factory=list)
    users: int = 0

    @property
    def deleted(self) -> list[Change]:
        """The entries removed for good."""
        return [c for c in self.changes if c.new == DELETED]


class Lifecycle:
    """The nightly lifecycle over every user's MEMORY.md."""

    def __init__(
        self, memory: MemoryService, access: AccessCounter, config: LifecycleConfig
    ) -> None:
        self.memory = memory
        self.access = access
        self.config = config

    def health(self, user_key: str, entry: Entry, now: datetime) -> float:
        """One entry's health as of ``now``."""
        return entry_health(entry, self.access.get(user_key, entry.id), now, self.config)

    def run_user(self, user_key: str, now: datetime) -> list[Change]:
        """Apply the lifecycle to one user; writes MEMORY.md once if anything changed."""
        stats = self.access.get_many(user_key)
        changes: list[Change] = []
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            for entry in doc.entries:
                health = entry_health(entry, stats.get(entry.id, AccessStat()), now, self.config)
                new = next_status(entry, health, now, self.config)
                if new is None:
                    continue
                changes.append(Change(user_key, entry.id, entry.status, new, health))
                if new == DELETED:
                    doc = doc.without(entry.id)
                    log.info("lifecycle: deleted %s %s", user_key, entry.id)  # no user text
                else:
                    reason = f"health {health:.3f}"
                    doc = doc.with_entry(with_status(entry, new, now, reason))
            if changes:
                self.memory.write_document(user_key, doc)
        for c in changes:
            if c.new == DELETED:
                self.access.forget(user_key, c.entry_id)
        return changes

    def run_lifecycle(self, now: datetime) -> LifecycleReport:
        """The nightly job over every user; a second run the same night changes nothing."""
        changes: list[Change] = []
        users = list_user_keys(self.memory.data_dir)
        for user_key in users:
            changes.extend(self.run_user(user_key, now))
        return LifecycleReport(changes, len(users))
