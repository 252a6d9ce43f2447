"""pcai.db migrations: fresh and pre-migration files, order, failures, a newer file."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memory.config import PendingConfig
from memory.db import connect
from memory.errors import StateSchemaError, StateTooNewError
from memory.migrations import MIGRATIONS, TABLE, Migration, applied
from memory.pending import PendingStore
from memory.reminders import ReminderStore
from memory.state import StateDB

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=TPE)
ALICE = "telegram_1001"
NAMES = [m.name for m in MIGRATIONS]

# The DDL each feature ran through StateDB.ensure before migrations existed, verbatim: the
# schema of every pcai.db written by earlier versions. Frozen here, never edited.
LEGACY_DDL: dict[str, str] = {
    "pending": """
CREATE TABLE IF NOT EXISTS pending_memories (
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
);
CREATE INDEX IF NOT EXISTS pending_by_user ON pending_memories (user_key, status);
CREATE INDEX IF NOT EXISTS pending_by_expiry ON pending_memories (status, expires_ts);
CREATE INDEX IF NOT EXISTS pending_by_message ON pending_memories (user_key, message_id);
CREATE TABLE IF NOT EXISTS pending_messages (
    user_key TEXT NOT NULL,
    message_id TEXT NOT NULL,
    proposal_id TEXT NOT NULL,
    PRIMARY KEY (user_key, message_id)
);
""",
    "access": """
CREATE TABLE IF NOT EXISTS memory_access (
    user_key TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_access TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (user_key, entry_id)
);
""",
    "short_term": """
CREATE TABLE IF NOT EXISTS short_term_memory (
    id INTEGER PRIMARY KEY,
    user_key TEXT NOT NULL,
    category TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS short_term_by_user
    ON short_term_memory (user_key, category, created_at);
""",
    "why": """
CREATE TABLE IF NOT EXISTS last_injection (
    user_key TEXT PRIMARY KEY,
    injected TEXT NOT NULL,
    at TEXT NOT NULL
);
""",
    "notices": """
CREATE TABLE IF NOT EXISTS told_problems (
    user_key TEXT NOT NULL,
    topic TEXT NOT NULL,
    stamp TEXT NOT NULL,
    told_ts REAL NOT NULL,
    PRIMARY KEY (user_key, topic)
);
CREATE TABLE IF NOT EXISTS notice_batches (
    key TEXT PRIMARY KEY,
    queued_ts REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS notice_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_key TEXT NOT NULL,
    text TEXT NOT NULL,
    created_ts REAL NOT NULL
);
""",
    "undo": """
CREATE TABLE IF NOT EXISTS forget_undo (
    id TEXT PRIMARY KEY,
    user_key TEXT NOT NULL,
    entries TEXT NOT NULL,
    forgotten_at TEXT NOT NULL,
    expires_ts REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS forget_undo_by_user ON forget_undo (user_key, forgotten_at);
""",
    "reminders": """
CREATE TABLE IF NOT EXISTS reminders (
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
);
CREATE INDEX IF NOT EXISTS reminders_by_user ON reminders (user_key, status, due_ts);
CREATE INDEX IF NOT EXISTS reminders_by_status ON reminders (status, due_ts);
CREATE TABLE IF NOT EXISTS reminder_users (
    user_key TEXT PRIMARY KEY,
    zone TEXT NOT NULL DEFAULT '',
    briefing_at TEXT NOT NULL DEFAULT '',
    briefing_last TEXT NOT NULL DEFAULT ''
);
""",
}


def _legacy(path: Path, features: tuple[str, ...] = tuple(LEGACY_DDL)) -> None:
    """A pcai.db as the old code left it: each feature's DDL run, no migrations table."""
    conn = connect(path, vec=False)
    for name in features:
        conn.executescript(LEGACY_DDL[name])
    conn.commit()
    conn.close()


def _fill(path: Path) -> None:
    """Rows such as a running bot writes, inserted the way the old code inserted them."""
    conn = connect(path, vec=False)
    conn.execute(
        "INSERT INTO pending_memories (id, user_key, text, section, source, fields, "
        "conflict_ids, conflict_note, created_at, expires_at, expires_ts) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (
            "p-0001",
            ALICE,
            "我喜歡藍色",
            "偏好",
            "chat:7",
            '{"user_weight": 7}',
            "[]",
            "",
            T0.isoformat(),
            (T0 + timedelta(minutes=30)).isoformat(),
            (T0 + timedelta(minutes=30)).timestamp(),
        ),
    )
    conn.execute(
        "INSERT INTO pending_messages (user_key, message_id, proposal_id) VALUES (?,?,?)",
        (ALICE, "42", "p-0001"),
    )
    conn.execute(
        "INSERT INTO memory_access (user_key, entry_id, access_count, last_access) "
        "VALUES (?,?,?,?)",
        (ALICE, "m-1", 3, "2026-11-22T10:00:00"),
    )
    conn.execute(
        "INSERT INTO last_injection (user_key, injected, at) VALUES (?,?,?)",
        (ALICE, "[]", T0.isoformat()),
    )
    conn.execute(
        "INSERT INTO notice_outbox (user_key, text, created_ts) VALUES (?,?,?)",
        (ALICE, "hello", T0.timestamp()),
    )
    conn.execute(
        "INSERT INTO reminders (user_key, text, due_utc, due_ts, zone, status, created_at) "
        "VALUES (?,?,?,?,?,?,?)",
        (ALICE, "call mom", "2026-11-23T01:00:00+00:00", 1795395600.0, "Asia/Taipei",
         "scheduled", "2026-11-22T02:00:00+00:00"),
    )  # fmt: skip
    conn.commit()
    conn.close()


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table but the migrations record, in rowid order."""
    conn = connect(path, vec=False)
    try:
        names = [
            str(r[0])
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "AND name != ? ORDER BY name",
                (TABLE,),
            )
        ]
        return {n: [tuple(r) for r in conn.execute(f"SELECT * FROM {n}")] for n in names}
    finally:
        conn.close()


def _schema(path: Path) -> set[tuple[str, str, str]]:
    conn = connect(path, vec=False)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name != ? AND sql IS NOT NULL",
            (TABLE,),
        ).fetchall()
        return {(str(r[0]), str(r[1]), str(r[2])) for r in rows}
    finally:
        conn.close()


def _record(path: Path) -> list[tuple[str, int]]:
    conn = connect(path, vec=False)
    try:
        return [(str(r[0]), int(r[1])) for r in conn.execute(f"SELECT name, adopted FROM {TABLE}")]
    finally:
        conn.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _open(path: Path, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[str]:
    state = StateDB(path, migrations)
    try:
        return state.migrated
    finally:
        state.close()


# -- a fresh file ------------------------------------------------------------------------
def test_a_fresh_file_gets_every_migration_once_in_order(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    assert _open(db) == NAMES
    assert _record(db) == [(name, 0) for name in NAMES]
    assert _open(db) == []  # the next start applies nothing
    assert _record(db) == [(name, 0) for name in NAMES]


def test_migration_1_is_exactly_the_schema_the_features_made_for_themselves(
    tmp_path: Path,
) -> None:
    _legacy(tmp_path / "old.db")
    _open(tmp_path / "new.db", MIGRATIONS[:1])
    assert _schema(tmp_path / "new.db") == _schema(tmp_path / "old.db")


# -- adopting a file made before migrations ------------------------------------------------
def test_a_file_from_before_migrations_is_adopted_with_every_row(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _legacy(db)
    _fill(db)
    before = _rows(db)
    assert _open(db) == NAMES  # the later migrations run after the adoption
    assert _record(db)[0] == ("m001_initial", 1)
    assert [name for name, _ in _record(db)] == NAMES
    state = StateDB(db)
    try:
        proposal = PendingStore(state, PendingConfig()).get(ALICE, "p-0001")
        reminder = ReminderStore(state).get(ALICE, 1)
        assert applied(state.conn) == NAMES
    finally:
        state.close()
    assert (proposal.text, proposal.fields, proposal.section) == (
        "我喜歡藍色",
        {"user_weight": 7},
        "偏好",
    )
    assert (reminder.text, reminder.status) == ("call mom", "scheduled")
    assert _rows(db).keys() >= before.keys()
    assert {t: _rows(db)[t] for t in before} == before


def test_a_file_from_before_a_feature_existed_gains_its_tables(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _legacy(db, ("pending", "access"))  # a file from before reminders, undo and notices
    _fill_pending_only(db)
    _open(db)
    assert _record(db)[0] == ("m001_initial", 1)
    state = StateDB(db)
    try:
        assert PendingStore(state, PendingConfig()).get(ALICE, "p-0001").text == "我喜歡藍色"
        made = ReminderStore(state).add(ALICE, "call mom", due=T0, zone="Asia/Taipei", now=T0)
        assert ReminderStore(state).get(ALICE, made.id).text == "call mom"
    finally:
        state.close()


def _fill_pending_only(path: Path) -> None:
    conn = connect(path, vec=False)
    conn.execute(
        "INSERT INTO pending_memories (id, user_key, text, created_at, expires_at, expires_ts) "
        "VALUES (?,?,?,?,?,?)",
        ("p-0001", ALICE, "我喜歡藍色", T0.isoformat(), T0.isoformat(), T0.timestamp()),
    )
    conn.commit()
    conn.close()


def test_an_old_file_whose_table_lacks_a_column_is_refused_unchanged(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    conn = connect(db, vec=False)
    conn.execute("CREATE TABLE pending_memories (id TEXT PRIMARY KEY, user_key TEXT, text TEXT)")
    conn.execute("INSERT INTO pending_memories VALUES ('p-1', ?, 'keep me')", (ALICE,))
    conn.commit()
    conn.close()
    digest = _digest(db)
    with pytest.raises(StateSchemaError, match="pending_memories lacks column") as err:
        StateDB(db)
    assert "conflict_ids" in err.value.missing
    assert _digest(db) == digest
    assert _rows(db) == {"pending_memories": [("p-1", ALICE, "keep me")]}


# -- order, once, transactions -------------------------------------------------------------
def _logging(name: str) -> Migration:
    def step(conn: Any) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS steps (name TEXT)")
        conn.execute("INSERT INTO steps (name) VALUES (?)", (name,))

    return Migration(name, step)


def _steps(path: Path) -> list[str]:
    conn = connect(path, vec=False)
    try:
        return [str(r[0]) for r in conn.execute("SELECT name FROM steps ORDER BY rowid")]
    finally:
        conn.close()


def test_migrations_run_in_their_order_each_once(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    first = (*MIGRATIONS, _logging("m101_b"), _logging("m102_a"))
    assert _open(db, first) == [*NAMES, "m101_b", "m102_a"]
    assert _open(db, first) == []
    later = (*first, _logging("m103_c"))  # the next release adds one at the end
    assert _open(db, later) == ["m103_c"]
    assert _steps(db) == ["m101_b", "m102_a", "m103_c"]
    assert [name for name, _ in _record(db)] == [*NAMES, "m101_b", "m102_a", "m103_c"]


def test_two_processes_opening_a_new_file_apply_each_migration_once(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    steps = (*MIGRATIONS, _logging("m101_once"))
    one, two = StateDB(db, steps), StateDB(db, steps)
    try:
        assert one.migrated == [*NAMES, "m101_once"] and two.migrated == []
    finally:
        one.close()
        two.close()
    assert _steps(db) == ["m101_once"]


def _failing(after: Callable[[Any], None]) -> Migration:
    def step(conn: Any) -> None:
        after(conn)
        raise RuntimeError("the disk is full")

    return Migration("m101_breaks", step)


def test_a_failing_migration_leaves_no_trace_and_is_tried_again(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _open(db)
    broken = _failing(lambda conn: conn.execute("CREATE TABLE half (x TEXT)"))
    with pytest.raises(RuntimeError, match="disk is full"):
        StateDB(db, (*MIGRATIONS, broken))
    assert "half" not in _rows(db)  # its DDL was rolled back with it
    assert [name for name, _ in _record(db)] == NAMES
    assert _open(db, (*MIGRATIONS, _logging("m101_breaks"))) == ["m101_breaks"]


# -- a file from a newer PCAI --------------------------------------------------------------
def test_a_file_from_a_newer_version_is_refused_in_one_sentence_unchanged(
    tmp_path: Path,
) -> None:
    db = tmp_path / "pcai.db"
    _open(db, (*MIGRATIONS, _logging("m900_from_the_future")))
    state = StateDB(db, (*MIGRATIONS, _logging("m900_from_the_future")))
    PendingStore(state, PendingConfig()).add(ALICE, "我喜歡藍色", now=T0)
    state.close()
    digest, rows = _digest(db), _rows(db)
    with pytest.raises(StateTooNewError) as err:
        StateDB(db)  # this version knows only MIGRATIONS
    sentence = str(err.value)
    assert "newer version of PCAI" in sentence and "m900_from_the_future" in sentence
    assert "\n" not in sentence and sentence.endswith("the file was not changed")
    assert err.value.unknown == ("m900_from_the_future",)
    assert _digest(db) == digest and _rows(db) == rows


# -- 2: a proposal's conflicts as data -----------------------------------------------------
def _old_note(shown: str) -> str:
    """The sentence migration 1's rows held (memory/confirm.py wrote it before migration 2)."""
    return (
        f"Similar memory exists ({shown}). Add as new, or replace it? "
        f"已有相近的記憶（{shown}）。要新增，還是取代？"
    )


def test_a_stored_conflict_sentence_becomes_the_list_it_showed(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _open(db, MIGRATIONS[:1])  # a file as the version before migration 2 left it
    shown = "m-20261120-aa: 喜歡藍色 (blue); m-20261121-bb: likes (tea)). Add"
    notes = {"p-1": _old_note(shown), "p-2": "", "p-3": "hand-edited note"}
    conn = connect(db, vec=False)
    for pid, note in notes.items():
        conn.execute(
            "INSERT INTO pending_memories (id, user_key, text, conflict_note, created_at, "
            "expires_at, expires_ts) VALUES (?,?,?,?,?,?,?)",
            (pid, ALICE, "我喜歡綠色", note, T0.isoformat(), T0.isoformat(), T0.timestamp()),
        )
    conn.commit()
    conn.close()
    assert _open(db) == NAMES[1:]  # migration 2 and those after it
    state = StateDB(db)
    try:
        store = PendingStore(state, PendingConfig())
        got = {pid: store.get(ALICE, pid).conflicts_shown for pid in notes}
    finally:
        state.close()
    assert got == {"p-1": shown, "p-2": "", "p-3": "hand-edited note"}


# -- 3: fading notices ---------------------------------------------------------------------
def test_a_file_from_before_fading_notices_gains_the_table_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    db = tmp_path / "pcai.db"
    _open(db, MIGRATIONS[:2])  # the version before migration 3
    assert "fading_notices" not in _tables_of(db)
    assert _open(db) == NAMES[2:]  # migration 3 and those after it
    assert "fading_notices" in _tables_of(db)
    assert [name for name, _ in _record(db)] == NAMES


# -- 5: the deferred-work queue -------------------------------------------------------------
def test_a_file_from_before_the_deferred_queue_gains_it(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _open(db, MIGRATIONS[:4])  # the version before migration 5
    assert "deferred_work" not in _tables_of(db)
    assert _open(db) == ["m005_deferred_work"]
    assert "deferred_work" in _tables_of(db)
    assert [name for name, _ in _record(db)] == NAMES


def _tables_of(db: Path) -> set[str]:
    conn = connect(db, vec=False)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    finally:
        conn.close()
    return {str(r[0]) for r in rows}


# -- 4: the memory page --------------------------------------------------------------------
def test_a_file_from_before_the_memory_page_gains_its_tables(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _open(db, MIGRATIONS[:3])  # the version before migration 4
    assert _open(db) == NAMES[3:]  # migration 4 and those after it
    assert {"web_login_links", "web_sessions", "injection_history"} <= _tables_of(db)
    assert [name for name, _ in _record(db)] == NAMES
