"""``pcai.db``'s schema as named migration sets, one per owner, and the runner that applies them.

``pcai.db`` holds state that is never rebuilt (pending proposals, undo copies, reminders), so
its schema only ever changes by a new function at the end of its owner's set; one that has
shipped is never edited. This module holds the runner and the ``memory`` set (the tables of
memory/state and memory/write); each other owner keeps its set beside its code
(agent/schema.py, agent/notices.py, agent/reminders/schema.py, bot/telegram/open_turns.py,
bot/web/schema.py, bot/frontdesk/schema.py) and bot/schema.py composes them. The
``_migrations`` table records each migration applied (its name, the UTC time, whether it
adopted tables that were already there and, from m010 on, its set).

A file written before migrations existed (each feature created its tables with
``CREATE TABLE IF NOT EXISTS``; no ``_migrations`` table) is adopted: migration 1 is exactly
that schema, with the same ``IF NOT EXISTS``, so it adds only the tables such a file lacks and
leaves every row; the tables it found must have every column it declares. A file that names a
migration this code does not know, in a set it was given, was written by a newer PCAI and is
refused, unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.base.db import connect
from memory.errors import StateSchemaError, StateTooNewError

log = logging.getLogger(__name__)

TABLE = "_migrations"

_TABLE_DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    name TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL,
    adopted INTEGER NOT NULL DEFAULT 0
)
"""


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema: ``apply(conn)`` runs inside the caller's transaction.

    ``set`` names the owner whose tables it changes (``memory``, ``agent``, ``web``, ...).
    """

    name: str
    apply: Callable[[Any], None]
    set: str = "memory"


def _run(conn: Any, statements: Sequence[str]) -> None:
    for sql in statements:
        conn.execute(sql)


# -- 1: the schema every feature created for itself before migrations ---------------------
# The text of each statement is what the features ran (sqlite_master keeps it byte for byte,
# minus "IF NOT EXISTS"), so an adopted file and a new one have the same schema.
_INITIAL = (
    # memory.write.pending: proposals waiting for their owner's answer
    """CREATE TABLE IF NOT EXISTS pending_memories (
    id TEXT PRIMARY KEY,
    user_key TEXT NOT NULL,
    text TEXT NOT NULL,
    section TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    fields TEXT NOT NULL DEFAULT '{}',
    conflict_ids TEXT NOT NULL DEFAULT '[]',
    conflict_note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_ts REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    message_id TEXT NOT NULL DEFAULT '',
    entry_id TEXT NOT NULL DEFAULT '',
    resolved_ts REAL
)""",
    "CREATE INDEX IF NOT EXISTS pending_by_user ON pending_memories (user_key, status)",
    "CREATE INDEX IF NOT EXISTS pending_by_expiry ON pending_memories (status, expires_ts)",
    "CREATE INDEX IF NOT EXISTS pending_by_message ON pending_memories (user_key, message_id)",
    """CREATE TABLE IF NOT EXISTS pending_messages (
    user_key TEXT NOT NULL,
    message_id TEXT NOT NULL,
    proposal_id TEXT NOT NULL,
    PRIMARY KEY (user_key, message_id)
)""",
    # memory.state.usage: how often each memory was injected
    """CREATE TABLE IF NOT EXISTS memory_access (
    user_key TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_access TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (user_key, entry_id)
)""",
    # memory.state.short_term: dated notes by category (weather, calendar, mail)
    """CREATE TABLE IF NOT EXISTS short_term_memory (
    id INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL,
    category TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL
)""",
    """CREATE INDEX IF NOT EXISTS short_term_by_user
    ON short_term_memory (user_key, category, created_at)""",
    # agent.why: what the last prompt of each user held (/why)
    """CREATE TABLE IF NOT EXISTS last_injection (
    user_key TEXT PRIMARY KEY,
    injected TEXT NOT NULL,
    at TEXT NOT NULL
)""",
    # agent.notices: problems told once, and the outbox
    """CREATE TABLE IF NOT EXISTS told_problems (
    user_key TEXT NOT NULL,
    topic TEXT NOT NULL,
    stamp TEXT NOT NULL,
    told_ts REAL NOT NULL,
    PRIMARY KEY (user_key, topic)
)""",
    """CREATE TABLE IF NOT EXISTS notice_batches (
    key TEXT PRIMARY KEY,
    queued_ts REAL NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS notice_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_key TEXT NOT NULL,
    text TEXT NOT NULL,
    created_ts REAL NOT NULL
)""",
    # memory.state.undo: what /forget removed, for a few minutes
    """CREATE TABLE IF NOT EXISTS forget_undo (
    id TEXT PRIMARY KEY,
    user_key TEXT NOT NULL,
    entries TEXT NOT NULL,
    forgotten_at TEXT NOT NULL,
    expires_ts REAL NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS forget_undo_by_user ON forget_undo (user_key, forgotten_at)",
    # agent.reminders.store and agent.reminders.users
    """CREATE TABLE IF NOT EXISTS reminders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_key TEXT NOT NULL,
    text TEXT NOT NULL,
    due_utc TEXT NOT NULL,
    due_ts REAL NOT NULL,
    zone TEXT NOT NULL,
    recurrence TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    confirmed_at TEXT NOT NULL DEFAULT '',
    fired_at TEXT NOT NULL DEFAULT '',
    occurrence_utc TEXT NOT NULL DEFAULT '',
    sent_at TEXT NOT NULL DEFAULT '',
    snoozed_at TEXT NOT NULL DEFAULT '',
    snooze_count INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_outcome TEXT NOT NULL DEFAULT '',
    message_id TEXT NOT NULL DEFAULT ''
)""",
    "CREATE INDEX IF NOT EXISTS reminders_by_user ON reminders (user_key, status, due_ts)",
    "CREATE INDEX IF NOT EXISTS reminders_by_status ON reminders (status, due_ts)",
    """CREATE TABLE IF NOT EXISTS reminder_users (
    user_key TEXT PRIMARY KEY,
    zone TEXT NOT NULL DEFAULT '',
    briefing_at TEXT NOT NULL DEFAULT '',
    briefing_last TEXT NOT NULL DEFAULT ''
)""",
)


def m001_initial(conn: Any) -> None:
    """Every table the features created for themselves before migrations existed."""
    _run(conn, _INITIAL)


# -- 2: a proposal's conflicts as data; the sentence is said at the edge ------------------
# How migration 1's rows held it: the shown part twice, inside one English + Chinese sentence.
_NOTE_HEAD = "Similar memory exists ("
_NOTE_MIDDLE = "). Add as new, or replace it? 已有相近的記憶（"
_NOTE_TAIL = "）。要新增，還是取代？"


def shown_from_note(note: str) -> str:
    """The ``id: summary; ...`` part of a stored conflict sentence (else the note as is)."""
    if not (note.startswith(_NOTE_HEAD) and note.endswith(_NOTE_TAIL)):
        return note
    inner = note[len(_NOTE_HEAD) : len(note) - len(_NOTE_TAIL)]
    half, odd = divmod(len(inner) - len(_NOTE_MIDDLE), 2)
    if odd or half < 0:
        return note
    shown, rest = inner[:half], inner[half:]
    return shown if rest == _NOTE_MIDDLE + shown else note


def m002_conflicts_shown(conn: Any) -> None:
    """``pending_memories.conflict_note`` (a sentence) becomes ``conflicts_shown`` (data)."""
    conn.execute("ALTER TABLE pending_memories RENAME COLUMN conflict_note TO conflicts_shown")
    rows = conn.execute(
        "SELECT id, conflicts_shown FROM pending_memories WHERE conflicts_shown != ''"
    ).fetchall()
    for row_id, note in rows:
        shown = shown_from_note(str(note))
        if shown != note:
            conn.execute(
                "UPDATE pending_memories SET conflicts_shown=? WHERE id=?", (shown, row_id)
            )


# -- 3: which fading memories each user was told about (memory.state.fading) -------------------
def m003_fading_notices(conn: Any) -> None:
    """``fading_notices``: the lifecycle archives only what its owner was told is fading."""
    conn.execute(
        """CREATE TABLE IF NOT EXISTS fading_notices (
    user_key TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    told_ts REAL NOT NULL,
    PRIMARY KEY (user_key, entry_id)
)"""
    )


# -- 4: the memory page's login links and sessions, and the history behind its Why ---------
# Links and session ids are stored as their SHA-256 only (bot/web/logins.py).
_PAGE = (
    """CREATE TABLE web_login_links (
    token_hash TEXT PRIMARY KEY,
    user_key TEXT NOT NULL,
    lang TEXT NOT NULL DEFAULT '',
    created_ts REAL NOT NULL,
    expires_ts REAL NOT NULL,
    used_ts REAL
)""",
    """CREATE TABLE web_sessions (
    id_hash TEXT PRIMARY KEY,
    user_key TEXT NOT NULL,
    lang TEXT NOT NULL DEFAULT '',
    created_ts REAL NOT NULL,
    expires_ts REAL NOT NULL
)""",
    # agent.why: the memories behind each of a user's last replies that used any
    """CREATE TABLE injection_history (
    id INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL,
    injected TEXT NOT NULL,
    at TEXT NOT NULL
)""",
    "CREATE INDEX injection_history_by_user ON injection_history (user_key, id)",
)


def m004_memory_page(conn: Any) -> None:
    """Login links, page sessions and the /why history of the memory page."""
    _run(conn, _PAGE)


# The memory set. The ones shipped after m004 in the one list (m005-m009) moved unchanged, same
# names, to the sets of the packages whose tables they change (bot/schema.py lists them all).
MEMORY_SET: tuple[Migration, ...] = (
    Migration("m001_initial", m001_initial),
    Migration("m002_conflicts_shown", m002_conflicts_shown),
    Migration("m003_fading_notices", m003_fading_notices),
    Migration("m004_memory_page", m004_memory_page),
)

# Which set each migration shipped in the one list belongs to: rows recorded before
# ``_migrations`` had a ``migration_set`` column (m010, bot/schema.py) are read by this.
SHIPPED_SETS: dict[str, str] = {
    "m001_initial": "memory",
    "m002_conflicts_shown": "memory",
    "m003_fading_notices": "memory",
    "m004_memory_page": "memory",  # its web and /why tables are adopted by their owners' sets
    "m005_deferred_work": "agent",
    "m006_open_turns": "telegram",
    "m007_initdata_spent": "web",
    "m008_user_language": "frontdesk",
    "m009_reminder_anchor": "reminders",
}
SET_COLUMN = "migration_set"


# -- applying ------------------------------------------------------------------------------
def _tables(conn: Any) -> set[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    return {str(r[0]) for r in rows}


def _columns(conn: Any, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")').fetchall()}


def applied(conn: Any) -> list[str]:
    """The names of the migrations recorded in the file, in the order they were applied."""
    if TABLE not in _tables(conn):
        return []
    return [str(r[0]) for r in conn.execute(f"SELECT name FROM {TABLE} ORDER BY rowid")]


def _recorded(conn: Any) -> list[tuple[str, str | None]]:
    """Each recorded name with its set: the column's since m010, else :data:`SHIPPED_SETS`'s
    (None: a name no set of ours ever shipped, so a newer PCAI's)."""
    if TABLE not in _tables(conn):
        return []
    if SET_COLUMN not in _columns(conn, TABLE):
        return [(name, SHIPPED_SETS.get(name)) for name in applied(conn)]
    rows = conn.execute(f"SELECT name, {SET_COLUMN} FROM {TABLE} ORDER BY rowid").fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def _unknown(conn: Any, migrations: Sequence[Migration]) -> list[str]:
    """Recorded names this code lacks, in a set it was given: only those make a file newer.

    A set the caller did not give is another owner's business (``memory.open`` alone does not
    refuse a file that carries the bot's sets).
    """
    known = {m.name for m in migrations}
    sets = {m.set for m in migrations}
    return [
        name
        for name, owner in _recorded(conn)
        if name not in known and (owner is None or owner in sets)
    ]


def _check_adopted(conn: Any, found: set[str], expected: dict[str, set[str]], path: Path) -> None:
    for table in sorted(found & expected.keys()):
        missing = expected[table] - _columns(conn, table)
        if missing:
            raise StateSchemaError(path, table, tuple(sorted(missing)))


def _expected_columns(migration: Migration) -> dict[str, set[str]]:
    """The columns ``migration`` declares, read from a scratch in-memory run of it."""
    scratch = connect(":memory:", vec=False)
    try:
        migration.apply(scratch)
        return {t: _columns(scratch, t) for t in _tables(scratch)}
    finally:
        scratch.close()


def _apply_one(
    conn: Any, migration: Migration, given: Sequence[Migration], path: Path, now: datetime
) -> bool:
    """Apply ``migration`` unless recorded already; False when it was. One transaction."""
    conn.execute("BEGIN IMMEDIATE")  # a second process opening the file waits here
    try:
        done = applied(conn)
        unknown = _unknown(conn, given)
        if unknown:
            raise StateTooNewError(path, tuple(unknown))
        if migration.name in done:
            conn.rollback()
            return False
        # Before migrations, each feature made its own tables: a file that has some of them
        # but no record is adopted rather than created.
        found = _tables(conn) - {TABLE} if not done else set()
        if found:
            _check_adopted(conn, found, _expected_columns(migration), path)
        conn.execute(_TABLE_DDL)
        migration.apply(conn)
        record = [migration.name, now.isoformat(timespec="seconds"), int(bool(found))]
        columns = "name, applied_at, adopted"
        if SET_COLUMN in _columns(conn, TABLE):  # from m010 on, each row names its set
            record.append(migration.set)
            columns += f", {SET_COLUMN}"
        marks = ", ".join("?" for _ in record)
        conn.execute(f"INSERT INTO {TABLE} ({columns}) VALUES ({marks})", record)
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    if found:
        log.info("%s: adopted a file made before migrations (%s)", path, ", ".join(sorted(found)))
    log.info("%s: applied migration %s", path, migration.name)
    return True


def migrate(
    conn: Any,
    path: Path,
    migrations: Sequence[Migration] = MEMORY_SET,
    now: datetime | None = None,
) -> list[str]:
    """Bring the file to the newest schema; returns the names applied now (often none).

    Raises :class:`StateTooNewError` (nothing changed) when the file records a migration
    that ``migrations`` does not have in one of its sets, and :class:`StateSchemaError` when
    a file made before migrations lacks a column migration 1 declares.
    """
    known = [m.name for m in migrations]
    if len(set(known)) != len(known):
        raise ValueError(f"migration names must be unique: {known}")
    unknown = _unknown(conn, migrations)
    if unknown:
        raise StateTooNewError(path, tuple(unknown))
    if set(known) <= set(applied(conn)):
        return []  # the usual start: nothing to do, no write lock taken
    stamp = now or datetime.now(UTC)
    return [m.name for m in migrations if _apply_one(conn, m, migrations, path, stamp)]
