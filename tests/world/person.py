"""The model of one person's world: what they keep, what waits for them, what they did.

Plain data beside the real service. The machine learns ids and stored texts from the files
when the person's act makes them (a memory's id, the text as MEMORY.md holds it, a reminder's
row), and from then on the model says what must stay true:

- ``memories``: every memory they confirmed and did not remove, its current version's id and
  text, pinned or not, and every id it has had (forget removes them all);
- ``pending`` / ``proposed``: memory proposals and reminder proposals waiting for their answer;
- ``reminders``: each scheduled reminder and the instant it must ring. "in 30 minutes" is an
  instant; "tomorrow at 9" is a clock time in a zone, which ``/tz`` moves to the new zone
  (09:00 stays 09:00) unless that time has already passed there (then it keeps its moment);
- ``acts``: the undo stack, each act with the kept state before it (:class:`Kept`);
- ``sent``: the ids of the messages they sent, each to be in the day's log once.

:class:`Kept` is the part an undo must give back exactly: the memories (text, pinned), the
scheduled reminders (text, instant) and the zone.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.world import files


@dataclass
class Memory:
    """A memory the person confirmed."""

    id: str
    text: str
    pinned: bool = False
    versions: list[str] = field(default_factory=list)  # every id it has had, current last


@dataclass
class Reminder:
    """A reminder the person set, and when they meant it to ring."""

    id: int
    text: str
    due: datetime  # the instant it rings
    clock: bool  # a clock time ("tomorrow at 9"): /tz keeps the clock time; else an instant
    zone: str  # the zone its clock time is in


@dataclass(frozen=True, slots=True)
class Kept:
    """What the person keeps, as an undo must give it back."""

    memories: tuple[tuple[str, bool], ...]
    reminders: tuple[tuple[str, str], ...]  # (text, instant to the second, UTC)
    zone: str


@dataclass(frozen=True, slots=True)
class Act:
    """One act of the person on what they keep, for undo."""

    what: str  # as the person typed it
    before: Kept
    model: dict[str, object]  # the model's own state before it (restored by an undo)
    reminder: int = 0  # the person's number of the reminder it acted on (0: none)


def instant(when: datetime) -> str:
    """``when`` to the second, in UTC (how kept reminders are compared)."""
    return when.astimezone(UTC).replace(microsecond=0).isoformat()


def kept_in_files(data_dir: Path, key: str) -> Kept:
    """What the files say the person keeps."""
    live = files.live(data_dir, key).values()
    rows = [r for r in files.reminders(data_dir, key) if r.status == "scheduled"]
    return Kept(
        tuple(sorted((e.text, e.is_core) for e in live)),
        tuple(sorted((r.text, instant(r.due)) for r in rows)),
        files.zone(data_dir, key),
    )


@dataclass
class Person:
    """One person's world (module docstring)."""

    key: str
    lang: str
    default_zone: str  # the zone before any /tz (the setting)
    zone: str = ""  # what /tz set ("" until then)
    memories: list[Memory] = field(default_factory=list)
    pending: dict[str, str] = field(default_factory=dict)  # proposal id -> text
    proposed: dict[int, Reminder] = field(default_factory=dict)  # reminder proposals
    reminders: dict[int, Reminder] = field(default_factory=dict)  # scheduled
    acts: list[Act] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # message ids
    forgotten: set[str] = field(default_factory=set)  # ids of forgotten memories' versions
    secrets: set[str] = field(default_factory=set)  # values planted in what they said

    @property
    def tz(self) -> ZoneInfo:
        """The zone the person is in now."""
        return ZoneInfo(self.zone or self.default_zone)

    def kept(self) -> Kept:
        """What the model says the person keeps."""
        return Kept(
            tuple(sorted((m.text, m.pinned) for m in self.memories)),
            tuple(sorted((r.text, instant(r.due)) for r in self.reminders.values())),
            self.zone,
        )

    def memory(self, entry_id: str) -> Memory | None:
        """The memory whose current version is ``entry_id``."""
        return next((m for m in self.memories if m.id == entry_id), None)

    def owner_of(self, entry_id: str) -> Memory | None:
        """The memory that has had ``entry_id`` as a version."""
        return next((m for m in self.memories if entry_id in m.versions), None)

    def _state(self) -> dict[str, object]:
        return copy.deepcopy(
            {
                "memories": self.memories,
                "reminders": self.reminders,
                "zone": self.zone,
                "forgotten": self.forgotten,
            }
        )

    def acted(self, what: str, before: Kept, state: dict[str, object], reminder: int = 0) -> None:
        """The person did ``what`` (on their reminder #``reminder``, if any); ``before`` /
        ``state``: what was kept, and the model, before."""
        self.acts.append(Act(what, before, state, reminder))

    def before_act(self) -> tuple[Kept, dict[str, object]]:
        """The kept state and the model's state now (taken before an act)."""
        return self.kept(), self._state()

    def undone(self, act: Act, live: dict[str, tuple[str, bool]]) -> None:
        """``act`` was taken back: the model as it was before it, its memories' ids learned
        again from ``live`` (id -> (text, pinned)) since an undo may bring a version back."""
        state = copy.deepcopy(act.model)
        self.memories = state["memories"]  # type: ignore[assignment]
        self.reminders = state["reminders"]  # type: ignore[assignment]
        self.zone = state["zone"]  # type: ignore[assignment]
        self.forgotten = state["forgotten"]  # type: ignore[assignment]
        free = dict(live)
        for m in self.memories:
            found = next((i for i, tp in free.items() if tp == (m.text, m.pinned)), None)
            if found is not None:
                del free[found]
                m.id = found
                if found not in m.versions:
                    m.versions.append(found)
        for m in self.memories:
            self.forgotten -= set(m.versions)

    def moved(self, zone: str, now: datetime) -> list[int]:
        """``/tz zone``: clock times move to the new zone; instants stay. The ids of the clock
        times already passed in the new zone (they keep their moment, or ring at once)."""
        new, passed = ZoneInfo(zone), []
        for r in self.reminders.values():
            if not r.clock:
                continue
            wall = r.due.astimezone(ZoneInfo(r.zone)).replace(tzinfo=None)
            due = wall.replace(tzinfo=new)
            if due > now:
                r.due, r.zone = due.astimezone(UTC), zone
            else:
                passed.append(r.id)
        self.zone = zone
        return passed
