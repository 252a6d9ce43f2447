"""The pending store: proposed memories waiting for their owner's answer.

A proposal lives in ``pcai.db`` with an expiry (30 minutes by default), so it survives a
restart. Only its owner can confirm, edit or reject it: a lookup always names the user, and a
proposal of someone else is reported as not found. Rows are kept after they are resolved
(confirmed / rejected / expired) so that answering twice gets a clear sentence instead of a
second write; resolved rows older than a week are purged by :meth:`PendingStore.expire_due`.

Recall never reads this table: a memory is searchable only once it is in MEMORY.md.

A confirmed entry's id is derived from its proposal
(:func:`~memory.write.proposals.entry_id_for`), so a crash between writing MEMORY.md and marking
the row confirmed is healed by :meth:`reconcile`: at start, and in the expiry job before it
reports anything, a pending row whose entry is already in the Markdown is marked confirmed, never
reported as expired.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from memory.base.users import check_user_key
from memory.config import PendingConfig
from memory.errors import (
    ProposalExpiredError,
    ProposalNotFoundError,
    ProposalResolvedError,
    UnreadableFileError,
)
from memory.state.statedb import StateDB
from memory.write.proposals import (
    CONFIRMED,
    EXPIRED,
    PENDING,
    REJECTED,
    Proposal,
    ProposalStatus,
    Reconciled,
    entry_id_for,
)

_PURGE_AFTER = timedelta(days=7)


def _row(r: Any) -> Proposal:
    return Proposal(
        id=r["id"],
        user_key=r["user_key"],
        text=r["text"],
        section=r["section"],
        source=r["source"],
        created_at=datetime.fromisoformat(r["created_at"]),
        expires_at=datetime.fromisoformat(r["expires_at"]),
        status=ProposalStatus(r["status"]),
        fields=json.loads(r["fields"] or "{}"),
        conflict_ids=tuple(json.loads(r["conflict_ids"] or "[]")),
        conflicts_shown=r["conflicts_shown"],
        message_id=r["message_id"],
        entry_id=r["entry_id"],
    )


def _aware(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("the pending store needs timezone-aware times")
    return now


class PendingStore:
    """Proposed memories in ``pcai.db``."""

    def __init__(self, state: StateDB, config: PendingConfig) -> None:
        self.state = state
        self.config = config

    def add(
        self,
        user_key: str,
        text: str,
        *,
        now: datetime,
        section: str = "",
        source: str = "",
        fields: Mapping[str, Any] | None = None,
        conflict_ids: tuple[str, ...] = (),
        conflicts_shown: str = "",
    ) -> Proposal:
        """Store a new proposal that expires ``ttl_minutes`` from ``now``."""
        check_user_key(user_key)
        now = _aware(now)
        proposal = Proposal(
            id="p-" + secrets.token_hex(4),
            user_key=user_key,
            text=text,
            section=section,
            source=source,
            created_at=now,
            expires_at=now + timedelta(minutes=self.config.ttl_minutes),
            fields=dict(fields or {}),
            conflict_ids=conflict_ids,
            conflicts_shown=conflicts_shown,
        )
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO pending_memories (id, user_key, text, section, source, fields, "
                "conflict_ids, conflicts_shown, created_at, expires_at, expires_ts) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    proposal.id,
                    user_key,
                    text,
                    section,
                    source,
                    json.dumps(dict(proposal.fields), ensure_ascii=False),
                    json.dumps(list(conflict_ids)),
                    conflicts_shown,
                    now.isoformat(),
                    proposal.expires_at.isoformat(),
                    proposal.expires_at.timestamp(),
                ),
            )
        return proposal

    def get(self, user_key: str, proposal_id: str) -> Proposal:
        """The proposal ``proposal_id`` of ``user_key`` in any status, or raise not found."""
        check_user_key(user_key)
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT * FROM pending_memories WHERE id=? AND user_key=?",
                (proposal_id.strip(), user_key),
            ).fetchone()
        if row is None:
            raise ProposalNotFoundError(proposal_id)
        return _row(row)

    def live(self, user_key: str, proposal_id: str, now: datetime) -> Proposal:
        """The proposal if it still waits for an answer; raise a clear error otherwise."""
        proposal = self.get(user_key, proposal_id)
        if proposal.status == PENDING and proposal.expires_at <= _aware(now):
            self.resolve(proposal.id, EXPIRED, now=now)
            proposal = self.get(user_key, proposal_id)
            # The owner learns of the expiry from this error, so the job must not tell again.
            raise ProposalExpiredError(proposal.id, proposal.expires_at)
        if proposal.status == EXPIRED:
            raise ProposalExpiredError(proposal.id)
        if proposal.status != PENDING:
            raise ProposalResolvedError(proposal.id, proposal.status)
        return proposal

    def pending(self, user_key: str, now: datetime | None = None) -> list[Proposal]:
        """The user's proposals still waiting (not yet expired at ``now``), oldest first."""
        check_user_key(user_key)
        with self.state.lock:
            rows = self.state.conn.execute(
                "SELECT * FROM pending_memories WHERE user_key=? AND status=? "
                "ORDER BY created_at, rowid",
                (user_key, PENDING),
            ).fetchall()
        out = [_row(r) for r in rows]
        if now is not None:
            out = [p for p in out if p.expires_at > _aware(now)]
        return out

    def update_text(
        self,
        user_key: str,
        proposal_id: str,
        text: str,
        *,
        now: datetime,
        conflict_ids: tuple[str, ...] = (),
        conflicts_shown: str = "",
    ) -> Proposal:
        """Replace the text of a live proposal (same id) and restart its expiry."""
        proposal = self.live(user_key, proposal_id, now)
        expires = _aware(now) + timedelta(minutes=self.config.ttl_minutes)
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE pending_memories SET text=?, conflict_ids=?, conflicts_shown=?, "
                "expires_at=?, expires_ts=? WHERE id=? AND status=?",
                (
                    text,
                    json.dumps(list(conflict_ids)),
                    conflicts_shown,
                    expires.isoformat(),
                    expires.timestamp(),
                    proposal.id,
                    PENDING,
                ),
            )
        return self.get(user_key, proposal_id)

    def attach_message(self, user_key: str, proposal_id: str, message_id: str) -> None:
        """Record a chat message that shows the proposal, so a reply to it can be matched.

        A proposal shown again (/pending, "which one?") keeps its earlier messages too: a
        reply to any of them answers it.
        """
        self.get(user_key, proposal_id)
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE pending_memories SET message_id=? WHERE id=? AND user_key=?",
                (str(message_id), proposal_id, user_key),
            )
            conn.execute(
                "INSERT OR REPLACE INTO pending_messages (user_key, message_id, proposal_id) "
                "VALUES (?,?,?)",
                (user_key, str(message_id), proposal_id),
            )

    def by_message(self, user_key: str, message_id: str) -> Proposal | None:
        """The user's proposal shown in chat message ``message_id`` (any status), if any."""
        check_user_key(user_key)
        if not str(message_id):
            return None
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT p.* FROM pending_messages m JOIN pending_memories p "
                "ON p.id = m.proposal_id AND p.user_key = m.user_key "
                "WHERE m.user_key=? AND m.message_id=?",
                (user_key, str(message_id)),
            ).fetchone()
            if row is None:  # shown before messages were kept per proposal
                row = self.state.conn.execute(
                    "SELECT * FROM pending_memories WHERE user_key=? AND message_id=? "
                    "ORDER BY rowid DESC LIMIT 1",
                    (user_key, str(message_id)),
                ).fetchone()
        return _row(row) if row else None

    def resolve(
        self, proposal_id: str, status: ProposalStatus, *, now: datetime, entry_id: str = ""
    ) -> bool:
        """Move a pending proposal to ``status``; False when it was no longer pending."""
        with self.state.transaction() as conn:
            cur = conn.execute(
                "UPDATE pending_memories SET status=?, entry_id=?, resolved_ts=? "
                "WHERE id=? AND status=?",
                (status, entry_id, _aware(now).timestamp(), proposal_id, PENDING),
            )
            return bool(cur.rowcount)

    def reopen(self, user_key: str, proposal_id: str) -> bool:
        """/undo of a confirm: the proposal the user confirmed waits again, as it was before
        (it expires when it would have); False when it is not a confirmed one of theirs."""
        with self.state.transaction() as conn:
            cur = conn.execute(
                "UPDATE pending_memories SET status=?, entry_id='', resolved_ts=NULL "
                "WHERE id=? AND user_key=? AND status=?",
                (PENDING, proposal_id, user_key, CONFIRMED),
            )
            return bool(cur.rowcount)

    def reconcile(
        self,
        entry_ids: Callable[[str], Collection[str]],
        now: datetime,
        *,
        due_only: bool = False,
    ) -> Reconciled:
        """Mark confirmed every pending proposal whose entry is already in the Markdown.

        ``entry_ids(user_key)`` gives the ids in that user's MEMORY.md; a user whose file
        cannot be read (:class:`UnreadableFileError`) is skipped and named in the result,
        the others go on. ``due_only`` looks only at proposals past their expiry (what the
        expiry job is about to report).
        """
        ts = _aware(now).timestamp()
        sql = "SELECT * FROM pending_memories WHERE status=?"
        args: tuple[Any, ...] = (PENDING,)
        if due_only:
            sql, args = sql + " AND expires_ts<=?", (PENDING, ts)
        with self.state.lock:
            rows = self.state.conn.execute(sql + " ORDER BY user_key, rowid", args).fetchall()
        by_user: dict[str, list[Proposal]] = {}
        for r in rows:
            by_user.setdefault(r["user_key"], []).append(_row(r))
        confirmed: list[Proposal] = []
        unreadable: dict[str, UnreadableFileError] = {}
        for user_key, proposals in by_user.items():
            try:
                written = entry_ids(user_key)
            except UnreadableFileError as exc:
                unreadable[user_key] = exc
                continue
            for p in proposals:
                entry_id = entry_id_for(p)
                if entry_id in written and self.resolve(
                    p.id, CONFIRMED, now=now, entry_id=entry_id
                ):
                    confirmed.append(self.get(user_key, p.id))
        return Reconciled(tuple(confirmed), unreadable)

    def expire_due(
        self,
        now: datetime,
        user_key: str | None = None,
        *,
        skip_users: Collection[str] = (),
        on_expired: Callable[[Any, Proposal], None] | None = None,
    ) -> list[Proposal]:
        """Expire every proposal past its expiry (only ``user_key``'s if given), each once.

        The select and the update run in one transaction and the update only touches rows
        still pending, so two jobs racing (or a job re-run after a restart) never report the
        same proposal twice. ``on_expired(conn, proposal)`` runs inside that transaction (to
        queue the owner's notice with the change, so a crash cannot lose it). Proposals of
        ``skip_users`` (whose MEMORY.md cannot be checked for them just now) wait.
        """
        ts = _aware(now).timestamp()
        # A terminal chat beside the service expires only its own user's proposals: the
        # service tells everyone else about theirs.
        mine, args = ("", ()) if user_key is None else (" AND user_key=?", (user_key,))
        skip = sorted(skip_users)
        not_skipped = f" AND user_key NOT IN ({','.join('?' * len(skip))})" if skip else ""
        with self.state.transaction() as conn:
            rows = conn.execute(
                "UPDATE pending_memories SET status=?, resolved_ts=? "
                f"WHERE status=? AND expires_ts<=?{mine}{not_skipped} RETURNING *",
                (EXPIRED, ts, PENDING, ts, *args, *skip),
            ).fetchall()
            expired = sorted((_row(r) for r in rows), key=lambda p: (p.user_key, p.created_at))
            if on_expired is not None:
                for proposal in expired:
                    on_expired(conn, proposal)
            conn.execute(
                f"DELETE FROM pending_memories WHERE status!=? AND resolved_ts<?{mine}",
                (PENDING, ts - _PURGE_AFTER.total_seconds(), *args),
            )
            conn.execute(
                "DELETE FROM pending_messages WHERE proposal_id NOT IN "
                "(SELECT id FROM pending_memories)"
            )
        return expired

    def sources(self, user_key: str, entry_ids: Iterable[str]) -> list[str]:
        """The ``source`` of the proposals that became these entries ("chat:<message id>")."""
        check_user_key(user_key)
        ids = list(entry_ids)
        marks = ",".join("?" * len(ids))
        with self.state.lock:
            rows = self.state.conn.execute(
                f"SELECT source FROM pending_memories WHERE user_key=? AND entry_id IN ({marks})",
                (user_key, *ids),
            ).fetchall()
        return [r[0] for r in rows if r[0]]

    def redact(
        self,
        user_key: str,
        redact: Callable[[str], str],
        entry_ids: Iterable[str],
        blank: str,
        note: Callable[[str, str, str], None] | None = None,
    ) -> int:
        """Redact the user's rows (forget); the proposals of ``entry_ids`` become ``blank``.

        A proposal still waiting whose text (or a field) held a copy is taken back (rejected):
        confirmed, it would write a memory made of the forgotten one, with ``blank`` in it.
        ``note(key, before, after)`` hears of each value changed (``<row id>:<column>``, the
        status too), so :meth:`put_back` can undo it.
        """
        check_user_key(user_key)
        gone = set(entry_ids)
        changed = 0
        with self.state.transaction() as conn:
            rows = conn.execute(
                "SELECT id, text, fields, conflicts_shown, entry_id, status, resolved_ts "
                "FROM pending_memories WHERE user_key=?",
                (user_key,),
            ).fetchall()
            for r in rows:
                if r["entry_id"] in gone:
                    text, fields = blank, "{}"
                else:
                    values = json.loads(r["fields"] or "{}")
                    text = redact(r["text"])
                    red = {k: redact(v) if isinstance(v, str) else v for k, v in values.items()}
                    fields = r["fields"] if red == values else json.dumps(red, ensure_ascii=False)
                note_text = redact(r["conflicts_shown"])
                status, resolved = r["status"], r["resolved_ts"]
                if status == PENDING and (text, fields) != (r["text"], r["fields"]):
                    status, resolved = REJECTED, datetime.now().timestamp()
                new = {
                    "text": text,
                    "fields": fields,
                    "conflicts_shown": note_text,
                    "status": status,
                }
                if tuple(new.values()) != tuple(r[column] for column in new):
                    conn.execute(
                        "UPDATE pending_memories SET text=?, fields=?, conflicts_shown=?, "
                        "status=?, resolved_ts=? WHERE id=?",
                        (text, fields, note_text, status, resolved, r["id"]),
                    )
                    changed += 1
                    for column, value in new.items():
                        if note is not None and value != r[column]:
                            note(f"{r['id']}:{column}", r[column], value)
        return changed

    def put_back(self, user_key: str, changes: Mapping[str, tuple[str, str]]) -> None:
        """Undo :meth:`redact`: each value still as it left it gets its old one back."""
        check_user_key(user_key)
        with self.state.transaction() as conn:
            for key, (before, after) in changes.items():
                row_id, _, column = key.rpartition(":")
                if column in ("text", "fields", "conflicts_shown"):
                    conn.execute(
                        f"UPDATE pending_memories SET {column}=? "
                        f"WHERE id=? AND user_key=? AND {column}=?",
                        (before, row_id, user_key, after),
                    )
                elif column == "status" and (before, after) == (PENDING, REJECTED):
                    # A proposal the forget took back waits again (it expires when it would
                    # have); one answered or purged since stays as it is.
                    conn.execute(
                        "UPDATE pending_memories SET status=?, resolved_ts=NULL "
                        "WHERE id=? AND user_key=? AND status=?",
                        (PENDING, row_id, user_key, REJECTED),
                    )
