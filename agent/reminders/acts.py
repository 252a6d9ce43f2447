"""What an act of the user did to their reminders (snooze, done, cancel, set, /tz), noted for
/undo (agent/forget.py), and its inverse: the rows and the zone as they were before it.

The note holds only the fields an act changes (ids, states, times, the zone; never a text),
and only the rows the act was about: a reminder firing meanwhile is never put back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.reminders import store as rs
from agent.reminders.store import Change, Reminder

if TYPE_CHECKING:
    from agent.reminders.service import ReminderService


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The user's rows (undo fields) and zone setting at one moment."""

    rows: dict[int, dict[str, Any]]
    zone: str  # the setting ("" until a /tz)
    shown: str  # the zone in force (the default until a /tz), to name it


def snapshot(service: ReminderService, user_key: str) -> Snapshot:
    """The user's reminders and zone now."""
    zone = service.store.users.settings(user_key).zone
    return Snapshot(service.store.states(user_key), zone, service.zone(user_key).key)


def changes(before: Snapshot, after: Snapshot, target: int | None) -> dict[str, Any]:
    """The note of one act ({} when it changed nothing): the row ``target`` and the rows it
    made (a snooze's copy, a reminder set at once), or for ``target`` None (a /tz) the rows
    it moved and the zone."""
    out: list[list[Any]] = []
    for rid, now in sorted(after.rows.items()):
        was = before.rows.get(rid)
        if was == now:
            continue
        if target is None:  # /tz moves scheduled rows; one that fired meanwhile is not its
            if was is not None and was["status"] == now["status"] == rs.SCHEDULED:
                out.append([rid, was, now])
        elif rid == target or (was is None and now["status"] != rs.PROPOSED):
            out.append([rid, was, now])
    note: dict[str, Any] = {"reminders": out} if out else {}
    if target is None and before.zone != after.zone:
        note |= {
            "reminders": out,
            "zone": [before.zone, after.zone],
            "shown": [before.shown, after.shown],
        }
    return note


def put_back(
    service: ReminderService, user_key: str, note: dict[str, Any]
) -> list[Reminder] | None:
    """Undo the act ``note`` describes, only while everything it changed reads as it left
    it (else None, nothing written). Returns the rows as they are again."""
    zone = note.get("zone")
    if zone is not None and service.store.users.settings(user_key).zone != zone[1]:
        return None
    done: list[Change] = [(int(r), b, a) for r, b, a in note.get("reminders", [])]
    rows = service.store.put_back(user_key, done)
    if rows is None:
        return None
    for row in rows:
        if row.status == rs.SCHEDULED:
            service.scheduler.schedule_at(row.due, row.key)
        else:
            service.scheduler.cancel(row.key)
    if zone is not None:
        service.zone_back(user_key, str(zone[0]))
    return rows
