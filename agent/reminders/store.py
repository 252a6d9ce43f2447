"""Reminders in ``pcai.db``: rows, per-user zone and briefing settings, and guarded transitions.

Every change of status is one ``UPDATE ... WHERE id=? AND status IN (...)``, so of two
callers racing (two jobs, or a job and a button press) exactly one wins and the other gets
None. Firing is a claim: ``scheduled -> firing`` commits *before* the message is sent, and only
the caller whose claim matched sends. A row found in ``firing`` when the process starts was
being sent when the process stopped; whether the message left is unknowable (Telegram has no
"did I send this?" call), so it is never sent again: it moves to ``unknown`` (at most once).

The recurrence rule is stored as an opaque string: its arithmetic lives in ``agent/reminders``.
Each row also says what its time is anchored to (``anchor``): a clock time in its zone
(:data:`WALL`: "at 9:00", "every day at 7") or an instant (:data:`INSTANT`: "in 30 minutes"),
so a change of zone moves the first and never the second.
Text is masked (memory.base.guards) before it reaches the file, like every other user-derived text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from agent.reminders.users import ReminderUsers
from memory.base.guards import mask
from memory.base.users import check_user_key
from memory.errors import ReminderNotFoundError
from memory.state.statedb import StateDB


class ReminderStatus(StrEnum):
    """Where a reminder is in its life; stored as the value."""

    PROPOSED = "proposed"  # waiting for its owner's confirmation
    SCHEDULED = "scheduled"
    FIRING = "firing"  # claimed by a sender; the send is in flight
    SENT = "sent"
    DONE = "done"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"  # the process stopped during the send: maybe delivered, never re-sent
    FAILED = "failed"  # the transport refused it every time it was tried


PROPOSED = ReminderStatus.PROPOSED
SCHEDULED = ReminderStatus.SCHEDULED
FIRING = ReminderStatus.FIRING
SENT = ReminderStatus.SENT
DONE = ReminderStatus.DONE
CANCELLED = ReminderStatus.CANCELLED
UNKNOWN = ReminderStatus.UNKNOWN
FAILED = ReminderStatus.FAILED
STATUSES = tuple(ReminderStatus)

# Statuses a user can still act on (cancel, snooze).
LIVE = (PROPOSED, SCHEDULED, SENT, UNKNOWN, FAILED)

# What a reminder's time is anchored to (migration 9). A row from before the column existed
# is ``wall`` (what every reminder was then).
WALL = "wall"  # a clock time in its zone: a change of zone keeps the clock time
INSTANT = "instant"  # a moment ("in 30 minutes", a snooze): a change of zone never moves it
ANCHORS = (WALL, INSTANT)


# What an act of the user may change in a row, and /undo puts back (never the text).
UNDO_FIELDS = (
    "status",
    "due_utc",
    "zone",
    "anchor",
    "snoozed_at",
    "snooze_count",
    "attempts",
    "last_outcome",
    "confirmed_at",
)
# One row an act changed: (id, its fields before, or None when the act made it; after).
Change = tuple[int, dict[str, Any] | None, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Reminder:
    """One stored reminder; times are aware UTC datetimes (``None`` when not yet set)."""

    id: int
    user_key: str
    text: str
    due: datetime
    zone: str
    recurrence: str  # "" for a one-off; an encoded rule otherwise
    status: ReminderStatus
    source: str
    created_at: datetime
    confirmed_at: datetime | None = None
    fired_at: datetime | None = None
    occurrence: datetime | None = None  # the due time of the occurrence last claimed
    sent_at: datetime | None = None
    snoozed_at: datetime | None = None
    snooze_count: int = 0
    attempts: int = 0
    last_outcome: str = ""  # sent | late | unknown | retry | failed | expired
    message_id: str = ""
    anchor: str = WALL  # WALL or INSTANT: what a change of zone keeps
    number: int = 0  # the owner's own number (#1 their first): what they see and type

    @property
    def key(self) -> str:
        """The scheduler's job key for this reminder."""
        return f"reminder:{self.id}"


def _iso(when: datetime) -> str:
    if when.tzinfo is None:
        raise ValueError("reminder times must be timezone-aware")
    return when.astimezone(UTC).isoformat()


def _time(raw: str) -> datetime | None:
    return datetime.fromisoformat(raw) if raw else None


_MAX_ID = 2**63 - 1  # SQLite's largest integer: a bigger id cannot even be looked up


def _row(r: Any) -> Reminder:
    return Reminder(
        id=int(r["id"]),
        user_key=r["user_key"],
        text=r["text"],
        due=datetime.fromisoformat(r["due_utc"]),
        zone=r["zone"],
        recurrence=r["recurrence"],
        status=ReminderStatus(r["status"]),
        source=r["source"],
        created_at=datetime.fromisoformat(r["created_at"]),
        confirmed_at=_time(r["confirmed_at"]),
        fired_at=_time(r["fired_at"]),
        occurrence=_time(r["occurrence_utc"]),
        sent_at=_time(r["sent_at"]),
        snoozed_at=_time(r["snoozed_at"]),
        snooze_count=int(r["snooze_count"]),
        attempts=int(r["attempts"]),
        last_outcome=r["last_outcome"],
        message_id=r["message_id"],
        anchor=r["anchor"],
        number=int(r["number"]),
    )


def _marks(values: Iterable[str]) -> tuple[str, tuple[str, ...]]:
    items = tuple(values)
    return ",".join("?" * len(items)), items


class ReminderStore:
    """Reminder rows in ``pcai.db``; ``users`` holds the per-user settings."""

    def __init__(self, state: StateDB) -> None:
        self.state = state
        self.users = ReminderUsers(state)

    # -- rows ------------------------------------------------------------------------------
    def add(
        self,
        user_key: str,
        text: str,
        *,
        due: datetime,
        zone: str,
        now: datetime,
        recurrence: str = "",
        status: ReminderStatus = PROPOSED,
        source: str = "",
        anchor: str = WALL,
    ) -> Reminder:
        """Store a new reminder (a proposal unless ``status`` says otherwise)."""
        check_user_key(user_key)
        if status not in (PROPOSED, SCHEDULED):
            raise ValueError(f"a new reminder is proposed or scheduled, not {status}")
        if anchor not in ANCHORS:
            raise ValueError(f"a reminder is anchored to one of {ANCHORS}, not {anchor!r}")
        confirmed = _iso(now) if status == SCHEDULED else ""
        with self.state.transaction() as conn:
            row = conn.execute(
                "INSERT INTO reminders (user_key, text, due_utc, due_ts, zone, recurrence, "
                "status, source, created_at, confirmed_at, anchor, number) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,"
                "(SELECT COALESCE(MAX(number), 0) + 1 FROM reminders WHERE user_key=?)) "
                "RETURNING *",
                (
                    user_key,
                    mask(text),
                    _iso(due),
                    due.timestamp(),
                    zone,
                    recurrence,
                    status,
                    source,
                    _iso(now),
                    confirmed,
                    anchor,
                    user_key,
                ),
            ).fetchone()
        return _row(row)

    def by_id(self, reminder_id: int) -> Reminder | None:
        """Any user's reminder by id (for the scheduler's callback), or None."""
        if not 0 < reminder_id <= _MAX_ID:  # "/reminders confirm" + 21 digits: no such row
            return None
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT * FROM reminders WHERE id=?", (reminder_id,)
            ).fetchone()
        return _row(row) if row else None

    def numbered(self, user_key: str, number: int) -> Reminder | None:
        """The reminder ``user_key`` knows as ``#number``, or None (another's is never found)."""
        if not 0 < number <= _MAX_ID:
            return None
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT * FROM reminders WHERE user_key=? AND number=?",
                (check_user_key(user_key), number),
            ).fetchone()
        return _row(row) if row else None

    def number_of(self, user_key: str, reminder_id: int) -> int | None:
        """The number ``user_key`` knows row ``reminder_id`` by; None if it is not theirs."""
        found = self.by_id(reminder_id)
        return found.number if found is not None and found.user_key == user_key else None

    def get(self, user_key: str, reminder_id: int) -> Reminder:
        """The reminder if it belongs to ``user_key``; someone else's is "not found"."""
        found = self.by_id(reminder_id)
        if found is None or found.user_key != check_user_key(user_key):
            raise ReminderNotFoundError(reminder_id)
        return found

    def of_user(self, user_key: str, statuses: Iterable[str] = LIVE) -> list[Reminder]:
        """The user's reminders in ``statuses``, soonest first."""
        marks, values = _marks(statuses)
        with self.state.lock:
            rows = self.state.conn.execute(
                f"SELECT * FROM reminders WHERE user_key=? AND status IN ({marks}) "
                "ORDER BY due_ts, id",
                (check_user_key(user_key), *values),
            ).fetchall()
        return [_row(r) for r in rows]

    def in_status(self, *statuses: str) -> list[Reminder]:
        """Every user's reminders in ``statuses``, soonest first (start-up, recovery)."""
        marks, values = _marks(statuses)
        with self.state.lock:
            rows = self.state.conn.execute(
                f"SELECT * FROM reminders WHERE status IN ({marks}) ORDER BY due_ts, id", values
            ).fetchall()
        return [_row(r) for r in rows]

    def due_ids(self, now: datetime) -> list[int]:
        """Ids of scheduled reminders due at ``now`` (a poll, for schedulers that lose jobs)."""
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT id FROM reminders WHERE status=? AND due_ts<=? ORDER BY due_ts, id",
                (SCHEDULED, now.timestamp()),
            ).fetchall()
        return [int(r[0]) for r in rows]

    def _move(
        self, reminder_id: int, sources: Iterable[str], target: str, **fields: Any
    ) -> Reminder | None:
        """``UPDATE`` one row from one of ``sources`` to ``target``; None if it was elsewhere."""
        marks, values = _marks(sources)
        sets = ", ".join(["status=?", *(f"{name}=?" for name in fields)])
        with self.state.transaction() as conn:
            row = conn.execute(
                f"UPDATE reminders SET {sets} WHERE id=? AND status IN ({marks}) RETURNING *",
                (target, *fields.values(), reminder_id, *values),
            ).fetchone()
        return _row(row) if row else None

    def confirm(self, reminder_id: int, due: datetime, now: datetime) -> Reminder | None:
        """``proposed -> scheduled`` at ``due``."""
        return self._move(
            reminder_id,
            (PROPOSED,),
            SCHEDULED,
            due_utc=_iso(due),
            due_ts=due.timestamp(),
            confirmed_at=_iso(now),
        )

    def cancel(self, reminder_id: int, now: datetime, outcome: str = "") -> Reminder | None:
        """Any live status ``-> cancelled`` (a reminder being sent right now cannot be)."""
        return self._move(reminder_id, LIVE, CANCELLED, last_outcome=outcome)

    def done(self, reminder_id: int, now: datetime) -> Reminder | None:
        """``sent / unknown / scheduled -> done`` (a one-off the user dealt with)."""
        return self._move(reminder_id, (SENT, UNKNOWN, SCHEDULED, FAILED), DONE)

    def reschedule(
        self,
        reminder_id: int,
        due: datetime,
        now: datetime,
        *,
        snooze: bool,
        anchor: str = WALL,
    ) -> Reminder | None:
        """A live (not proposed) reminder ``-> scheduled`` at ``due`` (anchored to ``anchor``);
        a snooze is counted."""
        if anchor not in ANCHORS:
            raise ValueError(f"a reminder is anchored to one of {ANCHORS}, not {anchor!r}")
        marks, values = _marks((SCHEDULED, SENT, UNKNOWN, FAILED))
        with self.state.transaction() as conn:
            row = conn.execute(
                "UPDATE reminders SET status=?, due_utc=?, due_ts=?, anchor=?, attempts=0, "
                "snoozed_at=CASE WHEN ? THEN ? ELSE snoozed_at END, "
                f"snooze_count=snooze_count+? WHERE id=? AND status IN ({marks}) RETURNING *",
                (
                    SCHEDULED,
                    _iso(due),
                    due.timestamp(),
                    anchor,
                    snooze,
                    _iso(now),
                    int(snooze),
                    reminder_id,
                    *values,
                ),
            ).fetchone()
        return _row(row) if row else None

    def move_to_zone(
        self, reminder_id: int, zone: str, due: datetime, anchor: str = WALL
    ) -> Reminder | None:
        """A scheduled reminder follows its user to a new zone, to ring at ``due`` (anchored
        to ``anchor``); None when it is no longer scheduled (it fired meanwhile)."""
        if anchor not in ANCHORS:
            raise ValueError(f"a reminder is anchored to one of {ANCHORS}, not {anchor!r}")
        return self._move(
            reminder_id,
            (SCHEDULED,),
            SCHEDULED,
            zone=zone,
            due_utc=_iso(due),
            due_ts=due.timestamp(),
            anchor=anchor,
        )

    # -- /undo of an act on reminders (agent/forget.py) ------------------------------------
    def states(self, user_key: str) -> dict[int, dict[str, Any]]:
        """Each of the user's rows as an act may change it (:data:`UNDO_FIELDS`, no text)."""
        fields = ", ".join(UNDO_FIELDS)
        with self.state.lock:
            rows = self.state.conn.execute(
                f"SELECT id, {fields} FROM reminders WHERE user_key=?", (check_user_key(user_key),)
            ).fetchall()
        return {int(r["id"]): {f: r[f] for f in UNDO_FIELDS} for r in rows}

    def put_back(self, user_key: str, changes: Sequence[Change]) -> list[Reminder] | None:
        """Undo an act: each ``(id, before, after)`` row reads ``before`` again (a row the act
        made, ``before`` None, is cancelled), only while every one still reads ``after``
        (else None, nothing written). Returns the rows as put back."""
        check_user_key(user_key)
        sets = ", ".join(f"{f}=?" for f in UNDO_FIELDS)
        out = []
        with self.state.transaction() as conn:
            for rid, _, after in changes:
                row = conn.execute(
                    "SELECT * FROM reminders WHERE id=? AND user_key=?", (rid, user_key)
                ).fetchone()
                if row is None or {f: row[f] for f in UNDO_FIELDS} != after:
                    return None
            for rid, before, _ in changes:
                if before is None:
                    back = conn.execute(
                        "UPDATE reminders SET status=?, last_outcome='undone' WHERE id=? "
                        "RETURNING *",
                        (CANCELLED, rid),
                    ).fetchone()
                else:
                    due = datetime.fromisoformat(str(before["due_utc"])).timestamp()
                    back = conn.execute(
                        f"UPDATE reminders SET {sets}, due_ts=? WHERE id=? RETURNING *",
                        (*(before[f] for f in UNDO_FIELDS), due, rid),
                    ).fetchone()
                out.append(_row(back))
        return out

    # -- firing ----------------------------------------------------------------------------
    def claim(self, reminder_id: int, now: datetime, early: float = 1.0) -> Reminder | None:
        """``scheduled -> firing`` if due by ``now`` (+``early`` seconds); only the claimer sends.

        The claim commits before the send: if the process dies during the send the row stays
        in ``firing`` and :meth:`stuck` finds it; it is never claimed (so never sent) again.
        """
        with self.state.transaction() as conn:
            row = conn.execute(
                "UPDATE reminders SET status=?, fired_at=?, occurrence_utc=due_utc "
                "WHERE id=? AND status=? AND due_ts<=? RETURNING *",
                (FIRING, _iso(now), reminder_id, SCHEDULED, now.timestamp() + early),
            ).fetchone()
        return _row(row) if row else None

    def finish(
        self,
        reminder_id: int,
        now: datetime,
        outcome: str,
        *,
        next_due: datetime | None = None,
        message_id: str = "",
    ) -> Reminder | None:
        """``firing ->`` sent/unknown (a one-off) or back to scheduled at ``next_due``."""
        fields: dict[str, Any] = {"last_outcome": outcome, "message_id": message_id}
        if outcome in ("sent", "late"):
            fields["sent_at"] = _iso(now)
        if next_due is not None:
            fields.update(due_utc=_iso(next_due), due_ts=next_due.timestamp(), attempts=0)
            return self._move(reminder_id, (FIRING,), SCHEDULED, **fields)
        target = UNKNOWN if outcome == "unknown" else SENT
        return self._move(reminder_id, (FIRING,), target, **fields)

    def retry(self, reminder_id: int, retry_at: datetime, max_attempts: int) -> Reminder | None:
        """``firing -> scheduled`` at ``retry_at`` after a refused send; ``failed`` when spent.

        The retry time is a moment (the alert is already due), so a change of zone keeps it.
        """
        with self.state.transaction() as conn:
            row = conn.execute(
                "UPDATE reminders SET attempts=attempts+1, last_outcome='retry', anchor=?, "
                "status=CASE WHEN attempts+1>=? THEN ? ELSE ? END, due_utc=?, due_ts=? "
                "WHERE id=? AND status=? RETURNING *",
                (
                    INSTANT,
                    max_attempts,
                    FAILED,
                    SCHEDULED,
                    _iso(retry_at),
                    retry_at.timestamp(),
                    reminder_id,
                    FIRING,
                ),
            ).fetchone()
        return _row(row) if row else None

    def stuck(self) -> list[Reminder]:
        """Rows left in ``firing`` by a process that stopped during a send."""
        return self.in_status(FIRING)

    def expire_proposals(self, created_before: datetime) -> list[Reminder]:
        """Proposals nobody answered since ``created_before``: cancelled, returned once each."""
        with self.state.transaction() as conn:
            rows = conn.execute(
                "UPDATE reminders SET status=?, last_outcome='expired' "
                "WHERE status=? AND created_at<? RETURNING *",
                (CANCELLED, PROPOSED, _iso(created_before)),
            ).fetchall()
        return [_row(r) for r in rows]
