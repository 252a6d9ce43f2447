"""pcai.db migrations: adopting a file written before migrations existed, every row kept."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from agent.reminders.store import ReminderStore
from bot.schema import MIGRATIONS_ALL
from bot.schema import SHIPPED as MIGRATIONS
from memory.base.db import connect
from memory.config import PendingConfig
from memory.errors import StateSchemaError
from memory.state.migrations import applied
from memory.state.statedb import StateDB
from memory.write.pending import PendingStore
from tests.memory.statefiles import (
    ALICE,
    NAMES,
    T0,
    digest_of,
    open_state,
    record_of,
    rows_of,
    schema_of,
)

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


def test_migration_1_is_exactly_the_schema_the_features_made_for_themselves(
    tmp_path: Path,
) -> None:
    _legacy(tmp_path / "old.db")
    open_state(tmp_path / "new.db", MIGRATIONS[:1])
    assert schema_of(tmp_path / "new.db") == schema_of(tmp_path / "old.db")


# -- adopting a file made before migrations ------------------------------------------------
def test_a_file_from_before_migrations_is_adopted_with_every_row(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _legacy(db)
    _fill(db)
    before = rows_of(db)
    assert open_state(db) == NAMES  # the later migrations run after the adoption
    assert record_of(db)[0] == ("m001_initial", 1)
    assert [name for name, _ in record_of(db)] == NAMES
    state = StateDB(db)
    try:
        proposal = PendingStore(state, PendingConfig()).get(ALICE, "p-0001")
        # the store needs its own set's later columns: the row as the adoption kept it
        reminder = state.conn.execute("SELECT text, status FROM reminders WHERE id=1").fetchone()
        assert applied(state.conn) == NAMES
    finally:
        state.close()
    assert (proposal.text, proposal.fields, proposal.section) == (
        "我喜歡藍色",
        {"user_weight": 7},
        "偏好",
    )
    assert tuple(reminder) == ("call mom", "scheduled")
    after = rows_of(db)
    assert after.keys() >= before.keys()
    # A later migration may add a column (with its default) at the end: every old value stays.
    kept = {t: [r[: len(o)] for r, o in zip(after[t], before[t], strict=True)] for t in before}
    assert kept == before


def test_a_file_from_before_a_feature_existed_gains_its_tables(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    _legacy(db, ("pending", "access"))  # a file from before reminders, undo and notices
    _fill_pending_only(db)
    open_state(db)
    assert record_of(db)[0] == ("m001_initial", 1)
    state = StateDB(db, MIGRATIONS_ALL)  # with the reminders' own set, as the bot opens it
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
    digest = digest_of(db)
    with pytest.raises(StateSchemaError, match="pending_memories lacks column") as err:
        StateDB(db)
    assert "conflict_ids" in err.value.missing
    assert digest_of(db) == digest
    assert rows_of(db) == {"pending_memories": [("p-1", ALICE, "keep me")]}
