"""Undo copies of forgotten memories, and notes of what a typed command just made: kept in
``pcai.db`` for a few minutes, then dropped.

``/forget`` deletes a memory from MEMORY.md and the index and blanks its copies elsewhere; the
only copy left is one row here: the entries, and the journal of every unit the redaction
changed (its old and new text), so ``/undo`` can put all of it back within the window. The
expiry job drops rows past their time and compacts the file, after which the text exists
nowhere in the data folder. The ``entries`` column holds ``{"entries": [...], "journal": {...}}``
(a copy written before journals existed is a plain list of entries).

A ``/remember`` or ``/remind`` the user typed is done at once (agent/undo.py): its row holds no
entries and no text, only ``"made"``, what the command made (``memory:<id>``, ``reminder:<id>``),
so ``/undo`` (or its Undo button) can take exactly that back within the same window.

A change the user made to confirmed memories (an edit, pin, unpin, scope, keep, restore:
memory/write/curation.py) is a row too: ``"act"`` names it, ``"before"`` holds the entries it
changed as they were, ``"after"`` as it left them (and the versions it added), so ``/undo``
writes ``before`` back only while MEMORY.md still reads ``after``. Every text here is already
in MEMORY.md, masked when it was written there.

An act on reminders (a snooze, done, cancel, setting a proposed one, ``/tz``) is a row too:
``"act"`` names it, ``"extra"`` holds the reminders' states and the zone before and after it
(agent/reminders/acts.py; never a text). An act nothing can take back (``/new``, refusing a
proposal) or that changed nothing is a ``"made"`` row, ``final:<act>`` or ``unchanged:<act>``:
``/undo`` says so and never reaches past it.

The rows are the user's acts, newest last: ``/undo`` takes back only the newest (and says what
it was); a second ``/undo`` the one before.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any

from memory.base.markdown import Entry
from memory.base.users import check_user_key
from memory.state.statedb import StateDB

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UndoCopy:
    """What one ``/forget`` removed, and until when it can be put back."""

    id: str
    user_key: str
    entries: tuple[Entry, ...]
    forgotten_at: datetime
    expires_at: datetime
    journal: dict[str, Any] = field(default_factory=dict)  # what the redaction changed
    made: str = ""  # a typed command's result, "memory:<id>" / "reminder:<id>" (no forget)
    act: str = ""  # a change to confirmed memories: "revise", "pin", "unpin", "restore"...
    before: tuple[Entry, ...] = ()  # a change: the entries it changed, as they were
    after: tuple[Entry, ...] = ()  # a change: those entries and the ones it added, as left
    gone: tuple[str, ...] = ()  # a change whose memory was forgotten since: its ids, no text
    extra: dict[str, Any] = field(default_factory=dict)  # an act on reminders: what it changed


def _entry(data: dict[str, Any]) -> Entry:
    known = {f.name for f in fields(Entry)}
    values = {k: v for k, v in data.items() if k in known}
    for name in ("supersedes", "claims", "history"):
        values[name] = tuple(values.get(name, ()))
    return Entry(**values)


def _row(r: Any) -> UndoCopy:
    forgotten = datetime.fromisoformat(r["forgotten_at"])
    body = json.loads(r["entries"])
    if isinstance(body, list):  # written before journals were kept
        body = {"entries": body}
    return UndoCopy(
        id=r["id"],
        user_key=r["user_key"],
        entries=tuple(_entry(e) for e in body.get("entries", [])),
        forgotten_at=forgotten,
        expires_at=datetime.fromtimestamp(float(r["expires_ts"]), forgotten.tzinfo),
        journal=dict(body.get("journal") or {}),
        made=str(body.get("made") or ""),
        act=str(body.get("act") or ""),
        before=tuple(_entry(e) for e in body.get("before", [])),
        after=tuple(_entry(e) for e in body.get("after", [])),
        gone=tuple(str(i) for i in body.get("gone", [])),
        extra=dict(body.get("extra") or {}),
    )


class UndoStore:
    """The ``forget_undo`` table: at most a few minutes' worth of forgotten entries."""

    def __init__(self, state: StateDB, minutes: int) -> None:
        self.state = state
        self.window = timedelta(minutes=minutes)

    def keep(
        self,
        user_key: str,
        entries: Sequence[Entry],
        now: datetime,
        journal: Mapping[str, Any] | None = None,
    ) -> UndoCopy:
        """Store the copy of what is about to be forgotten (and what its redaction changed)."""
        check_user_key(user_key)
        copy = UndoCopy(
            "u-" + secrets.token_hex(4),
            user_key,
            tuple(entries),
            now,
            now + self.window,
            dict(journal or {}),
        )
        data = {"entries": [asdict(e) for e in entries], "journal": copy.journal}
        self._insert(copy, data)
        return copy

    def keep_made(self, user_key: str, made: str, now: datetime) -> UndoCopy:
        """Note that a command of the user just made ``made`` (``memory:<id>``...), to undo."""
        check_user_key(user_key)
        copy = UndoCopy(
            "u-" + secrets.token_hex(4), user_key, (), now, now + self.window, made=made
        )
        self._insert(copy, {"entries": [], "made": made})
        return copy

    def keep_change(
        self,
        user_key: str,
        act: str,
        before: Sequence[Entry],
        after: Sequence[Entry],
        now: datetime,
        extra: Mapping[str, Any] | None = None,
    ) -> UndoCopy:
        """Note a change ``act`` of the user to confirmed memories: what it changed, both ways
        (``extra``: a confirm's proposal id, to reopen)."""
        check_user_key(user_key)
        copy = UndoCopy(
            "u-" + secrets.token_hex(4),
            user_key,
            (),
            now,
            now + self.window,
            act=act,
            before=tuple(before),
            after=tuple(after),
            extra=dict(extra or {}),
        )
        data = {
            "entries": [],
            "act": act,
            "before": [asdict(e) for e in before],
            "after": [asdict(e) for e in after],
            "extra": copy.extra,
        }
        self._insert(copy, data)
        return copy

    def keep_act(
        self, user_key: str, act: str, extra: Mapping[str, Any], now: datetime
    ) -> UndoCopy:
        """Note an act ``act`` on something other than memories (a snooze, a /tz: its reminders'
        states and zone before and after, in ``extra``; no text)."""
        check_user_key(user_key)
        copy = UndoCopy(
            "u-" + secrets.token_hex(4),
            user_key,
            (),
            now,
            now + self.window,
            act=act,
            extra=dict(extra),
        )
        self._insert(copy, {"entries": [], "act": act, "extra": copy.extra})
        return copy

    def _insert(self, copy: UndoCopy, data: Mapping[str, Any]) -> None:
        body = json.dumps(data, ensure_ascii=False)
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO forget_undo (id, user_key, entries, forgotten_at, expires_ts) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    copy.id,
                    copy.user_key,
                    body,
                    copy.forgotten_at.isoformat(),
                    copy.expires_at.timestamp(),
                ),
            )

    def hide(
        self, user_key: str, ids: frozenset[str], note: Callable[[str, str, str], None]
    ) -> int:
        """A forget of ``ids``: each noted change that holds one of them keeps only its act
        and ids (no text), so the forgotten text stays nowhere but the forget's own copy;
        ``note(row id, body before, body after)`` lets that forget's undo put it back."""
        check_user_key(user_key)
        hidden = 0
        with self.state.transaction() as conn:
            rows = conn.execute(
                "SELECT id, entries FROM forget_undo WHERE user_key=?", (user_key,)
            ).fetchall()
            for r in rows:
                body = json.loads(r["entries"])
                if not isinstance(body, dict) or not body.get("act"):
                    continue
                held = [e.get("id", "") for e in (*body.get("before", []), *body.get("after", []))]
                if not ids.intersection(held):
                    continue
                blank = json.dumps(
                    {"entries": [], "act": body["act"], "gone": sorted(set(held))},
                    ensure_ascii=False,
                )
                conn.execute("UPDATE forget_undo SET entries=? WHERE id=?", (blank, r["id"]))
                note(str(r["id"]), str(r["entries"]), blank)
                hidden += 1
        return hidden

    def put_back(self, user_key: str, changes: Mapping[str, tuple[str, str]]) -> None:
        """Undo of a forget: each hidden change reads as it did, if it still reads as hidden."""
        check_user_key(user_key)
        with self.state.transaction() as conn:
            for row_id, (before, after) in changes.items():
                conn.execute(
                    "UPDATE forget_undo SET entries=? WHERE id=? AND user_key=? AND entries=?",
                    (before, row_id, user_key, after),
                )

    def latest(self, user_key: str) -> UndoCopy | None:
        """The user's most recent copy still stored (it may be past its time)."""
        check_user_key(user_key)
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT * FROM forget_undo WHERE user_key=? ORDER BY forgotten_at DESC, rowid "
                "DESC LIMIT 1",
                (user_key,),
            ).fetchone()
        return _row(row) if row else None

    def drop(self, copy_id: str) -> None:
        """Delete one copy (after it was restored) and leave no trace of it in the file."""
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM forget_undo WHERE id=?", (copy_id,))
        self.checkpoint()

    def drop_user(self, user_key: str) -> int:
        """Delete every copy of ``user_key`` (an act that is final for all their memories):
        nothing older can be undone past it, so no text of theirs waits here for its time."""
        check_user_key(user_key)
        with self.state.transaction() as conn:
            gone = conn.execute("DELETE FROM forget_undo WHERE user_key=?", (user_key,)).rowcount
        if gone:
            self.compact()
        return int(gone)

    def drop_expired(self, now: datetime, user_key: str | None = None) -> list[UndoCopy]:
        """Delete every copy past its time (only ``user_key``'s if given); returns them."""
        mine, args = ("", ()) if user_key is None else (" AND user_key=?", (user_key,))
        with self.state.transaction() as conn:
            rows = conn.execute(
                f"DELETE FROM forget_undo WHERE expires_ts<=?{mine} RETURNING *",
                (now.timestamp(), *args),
            ).fetchall()
        copies = [_row(r) for r in rows]
        if copies:
            self.compact()
        return copies

    def checkpoint(self) -> None:
        """Empty the WAL, where old page images of deleted rows would otherwise linger."""
        with self.state.lock:
            self.state.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def compact(self) -> None:
        """Rewrite ``pcai.db`` (small) so no free page keeps text deleted before this version
        zeroed deleted rows, then empty the WAL."""
        with self.state.lock:
            try:
                self.state.conn.execute("VACUUM")
            except Exception as exc:  # busy (another process reading): the next drop retries
                log.warning("could not compact pcai.db after dropping undo copies: %s", exc)
        self.checkpoint()
