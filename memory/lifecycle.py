"""Memory health and the nightly lifecycle (docs/memory-lifecycle.md, "Health and lifecycle").

Scores are pure functions of the documented formulas. Days are whole days
(``(now - created).days``), and the decay rate is ``0.693 / half_life_days``. Recency counts
from ``created``, or from ``refreshed`` when the user kept or restored the memory since. An
entry without a readable ``created`` (a bullet a person typed by hand) counts as new: the job
never retires what it cannot date.

The nightly job moves each entry to the status its health calls for and records the change
in MEMORY.md (``status``, ``status_changed``, a ``history:`` line):

    health >= 0.3          -> active
    0.15 <= health < 0.3   -> low_priority   (still retrieved, ranked lower)
    health < 0.15          -> archived       (no longer retrieved), once the user was told
    archived over 60 days  -> deleted from MEMORY.md and the index

Nothing is archived silently. A memory is *fading* when its health will be below 0.15 within
``fade_notice_days`` (7); the fading job tells its owner ("these memories are fading: keep?",
with a keep button each) and records that in :class:`~memory.fading.FadeBook`. The nightly
job archives a memory only when its owner was told at least ``fade_notice_days`` before, and
after the memory was last kept or restored; until then it stays (low priority). Seven days
because the notice is weekly: every fading memory is in at least one message, and the user
has a full week to press keep, before anything leaves retrieval.

Core memories (``is_core`` or ``user_weight >= 9``) and deprecated versions in a supersedes
chain are never touched. Every step is reversible until deletion: :meth:`Governance.restore`
(or editing the status line) makes an entry active again, and the job then leaves it alone for
``restore_grace_days`` so a restore is not undone the next night.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final, Literal

from memory.access import AccessCounter, AccessStat
from memory.config import LifecycleConfig
from memory.fading import FadeBook
from memory.governance import with_status
from memory.markdown import Entry, MemoryStatus
from memory.service import MemoryService
from memory.users import list_user_keys

log = logging.getLogger(__name__)

SEED_LN2 = 0.693  # ln(2) rounded, as the documented health formula writes it
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
    """Layer 0: ``is_core`` or ``user_weight >= 9``."""
    return entry.is_core or entry.user_weight >= CORE_MIN_WEIGHT


def entry_health(entry: Entry, stat: AccessStat, now: datetime, config: LifecycleConfig) -> float:
    """The health score of one entry as of ``now`` (recency since created or refreshed)."""
    since = entry.refreshed_at or entry.created_at
    return health_score(
        recency_decay(days_between(since, now), config.recency_half_life_days),
        access_frequency(stat.count, config.access_saturation),
        weight_factor(entry.user_weight),
    )


def fade_day(entry: Entry, stat: AccessStat, config: LifecycleConfig) -> datetime | None:
    """When the entry's health falls below ``archive_below`` at today's rate, or None.

    Today's rate: its access count and weight stay as they are and only recency decays, so
    ``0.4 * exp(-k * days) + 0.35 * frequency + 0.25 * weight < archive_below`` first holds on
    whole day ``floor(ln(0.4 / (archive_below - rest)) / k) + 1`` after ``created`` (or
    ``refreshed``, when the user kept it). None for a core entry, one whose use and weight
    alone keep it up, or one without a readable date (the job never retires what it cannot
    date).
    """
    if is_core(entry):
        return None
    try:
        created = datetime.fromisoformat(entry.refreshed_at or entry.created_at)
    except ValueError:
        return None
    rest = 0.35 * access_frequency(stat.count, config.access_saturation) + 0.25 * weight_factor(
        entry.user_weight
    )
    if rest >= config.archive_below:
        return None
    k = SEED_LN2 / config.recency_half_life_days
    days = math.floor(math.log(0.4 / (config.archive_below - rest)) / k) + 1
    return created + timedelta(days=max(days, 0))


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


def is_fading(entry: Entry, stat: AccessStat, now: datetime, config: LifecycleConfig) -> bool:
    """Whether ``entry`` is live, not core, and below the archive line within the notice."""
    if is_core(entry) or entry.status not in (MemoryStatus.ACTIVE, MemoryStatus.LOW_PRIORITY):
        return False
    later = now + timedelta(days=config.fade_notice_days)
    return entry_health(entry, stat, later, config) < config.archive_below


def notice_counts(entry: Entry, told: datetime | None) -> bool:
    """Whether a fading notice told at ``told`` is about the entry as it is now.

    A notice from before the user last kept or restored the memory is about a memory they
    since said they want: it does not count.
    """
    if told is None:
        return False
    try:
        since = datetime.fromisoformat(entry.refreshed_at or entry.created_at)
    except ValueError:
        return True
    if since.tzinfo is None:
        since = since.replace(tzinfo=told.tzinfo)
    return told >= since


def may_archive(
    entry: Entry, told: datetime | None, now: datetime, config: LifecycleConfig
) -> bool:
    """Archive only what the owner was told about at least ``fade_notice_days`` before."""
    if not notice_counts(entry, told):
        return False
    assert told is not None
    return now - told >= timedelta(days=config.fade_notice_days)


@dataclass(frozen=True, slots=True)
class Fading:
    """A memory that is fading, and its health now."""

    entry: Entry
    health: float


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
        self,
        memory: MemoryService,
        access: AccessCounter,
        config: LifecycleConfig,
        fades: FadeBook | None = None,
    ) -> None:
        self.memory = memory
        self.access = access
        self.config = config
        # Without a book of notices nobody can have been told: nothing is ever archived.
        self.fades = fades

    def _told(self, user_key: str) -> dict[str, datetime]:
        return self.fades.told_at(user_key) if self.fades is not None else {}

    def fading(self, user_key: str, now: datetime) -> list[Fading]:
        """The user's fading memories, weakest first."""
        stats = self.access.get_many(user_key)
        out = []
        for entry in self.memory.entries(user_key):
            stat = stats.get(entry.id, AccessStat())
            if is_fading(entry, stat, now, self.config):
                out.append(Fading(entry, entry_health(entry, stat, now, self.config)))
        return sorted(out, key=lambda f: (f.health, f.entry.id))

    def to_tell(self, user_key: str, now: datetime) -> list[Fading]:
        """Fading memories the user has not been told about (since they last kept them)."""
        told = self._told(user_key)
        fading = self.fading(user_key, now)
        return [f for f in fading if not notice_counts(f.entry, told.get(f.entry.id))]

    def told(self, user_key: str, entry_ids: Iterable[str], now: datetime) -> None:
        """Record that the user was told, at ``now``, that these memories are fading."""
        if self.fades is not None:
            self.fades.told(user_key, entry_ids, now)

    def health(self, user_key: str, entry: Entry, now: datetime) -> float:
        """One entry's health as of ``now``."""
        return entry_health(entry, self.access.get(user_key, entry.id), now, self.config)

    def run_user(self, user_key: str, now: datetime) -> list[Change]:
        """Apply the lifecycle to one user; writes MEMORY.md once if anything changed."""
        stats = self.access.get_many(user_key)
        told = self._told(user_key)
        changes: list[Change] = []
        with self.memory.lock(user_key):
            doc = self.memory.document(user_key)
            for entry in doc.entries:
                health = entry_health(entry, stats.get(entry.id, AccessStat()), now, self.config)
                new = next_status(entry, health, now, self.config)
                if new == MemoryStatus.ARCHIVED and not may_archive(
                    entry, told.get(entry.id), now, self.config
                ):
                    # told first
                    new = (
                        MemoryStatus.LOW_PRIORITY if entry.status == MemoryStatus.ACTIVE else None
                    )
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
        if told and self.fades is not None:  # archived, recovered or gone: no notice pending
            still = {f.entry.id for f in self.fading(user_key, now)}
            self.fades.drop(user_key, [eid for eid in told if eid not in still])
        return changes

    def run_lifecycle(self, now: datetime) -> LifecycleReport:
        """The nightly job over every user; a second run the same night changes nothing."""
        changes: list[Change] = []
        users = list_user_keys(self.memory.data_dir)
        for user_key in users:
            changes.extend(self.run_user(user_key, now))
        return LifecycleReport(changes, len(users))
