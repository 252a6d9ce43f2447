"""pcai.db migrations: a fresh file, order, once, failures, a newer file, and each later step.

Adopting a file written before migrations existed is in ``test_migrations_legacy.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.schema import SHIPPED as MIGRATIONS
from memory.base.db import connect
from memory.config import PendingConfig
from memory.errors import StateTooNewError
from memory.state.migrations import Migration
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
    tables_of,
)


# -- a fresh file ------------------------------------------------------------------------
def test_a_fresh_file_gets_every_migration_once_in_order(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    assert open_state(db) == NAMES
    assert record_of(db) == [(name, 0) for name in NAMES]
    assert open_state(db) == []  # the next start applies nothing
    assert record_of(db) == [(name, 0) for name in NAMES]


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
    assert open_state(db, first) == [*NAMES, "m101_b", "m102_a"]
    assert open_state(db, first) == []
    later = (*first, _logging("m103_c"))  # the next release adds one at the end
    assert open_state(db, later) == ["m103_c"]
    assert _steps(db) == ["m101_b", "m102_a", "m103_c"]
    assert [name for name, _ in record_of(db)] == [*NAMES, "m101_b", "m102_a", "m103_c"]


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
    open_state(db)
    broken = _failing(lambda conn: conn.execute("CREATE TABLE half (x TEXT)"))
    with pytest.raises(RuntimeError, match="disk is full"):
        StateDB(db, (*MIGRATIONS, broken))
    assert "half" not in rows_of(db)  # its DDL was rolled back with it
    assert [name for name, _ in record_of(db)] == NAMES
    assert open_state(db, (*MIGRATIONS, _logging("m101_breaks"))) == ["m101_breaks"]


# -- a file from a newer PCAI --------------------------------------------------------------
def test_a_file_from_a_newer_version_is_refused_in_one_sentence_unchanged(
    tmp_path: Path,
) -> None:
    db = tmp_path / "pcai.db"
    open_state(db, (*MIGRATIONS, _logging("m900_from_the_future")))
    state = StateDB(db, (*MIGRATIONS, _logging("m900_from_the_future")))
    PendingStore(state, PendingConfig()).add(ALICE, "我喜歡藍色", now=T0)
    state.close()
    digest, rows = digest_of(db), rows_of(db)
    with pytest.raises(StateTooNewError) as err:
        StateDB(db)  # this version knows only MIGRATIONS
    sentence = str(err.value)
    assert "newer version of PCAI" in sentence and "m900_from_the_future" in sentence
    assert "\n" not in sentence and sentence.endswith("the file was not changed")
    assert err.value.unknown == ("m900_from_the_future",)
    assert digest_of(db) == digest and rows_of(db) == rows


# -- 2: a proposal's conflicts as data -----------------------------------------------------
def _old_note(shown: str) -> str:
    """The sentence migration 1's rows held (memory/write/decisions.py wrote it before m002)."""
    return (
        f"Similar memory exists ({shown}). Add as new, or replace it? "
        f"已有相近的記憶（{shown}）。要新增，還是取代？"
    )


def test_a_stored_conflict_sentence_becomes_the_list_it_showed(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    open_state(db, MIGRATIONS[:1])  # a file as the version before migration 2 left it
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
    assert open_state(db) == NAMES[1:]  # migration 2 and those after it
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
    open_state(db, MIGRATIONS[:2])  # the version before migration 3
    assert "fading_notices" not in tables_of(db)
    assert open_state(db) == NAMES[2:]  # migration 3 and those after it
    assert "fading_notices" in tables_of(db)
    assert [name for name, _ in record_of(db)] == NAMES


# -- 5: the deferred-work queue -------------------------------------------------------------
def test_a_file_from_before_the_deferred_queue_gains_it(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    open_state(db, MIGRATIONS[:4])  # the version before migration 5
    assert "deferred_work" not in tables_of(db)
    assert open_state(db, MIGRATIONS[:5]) == ["m005_deferred_work"]
    assert "deferred_work" in tables_of(db)
    assert [name for name, _ in record_of(db)] == NAMES[:5]


# -- 6, 7: open turns (no lost turn), spent Mini App logins ---------------------------------
def test_a_file_from_before_open_turns_gains_them(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    open_state(db, MIGRATIONS[:5])
    assert open_state(db, MIGRATIONS[:7]) == ["m006_open_turns", "m007_initdata_spent"]
    assert {"open_turns", "web_initdata_spent"} <= tables_of(db)


# -- 8: each person's language ---------------------------------------------------------------
def test_a_file_from_before_languages_gains_the_table(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    open_state(db, MIGRATIONS[:7])
    assert "user_language" not in tables_of(db)
    assert open_state(db, MIGRATIONS[:8]) == ["m008_user_language"]
    assert "user_language" in tables_of(db)
    assert [name for name, _ in record_of(db)] == NAMES[:8]


# -- 9: what a reminder's time is anchored to ------------------------------------------------
def test_reminders_from_before_the_anchor_keep_their_clock_times(tmp_path: Path) -> None:
    """Every reminder was a clock time before migration 9: an old row reads as one."""
    from agent.reminders.schema import REMINDERS_SET
    from agent.reminders.store import INSTANT, WALL, ReminderStore

    [NUMBERS] = [m for m in REMINDERS_SET if m.name == "reminders_002_numbers"]

    db = tmp_path / "pcai.db"
    open_state(db, MIGRATIONS[:8])
    conn = connect(db, vec=False)
    try:
        conn.execute(
            "INSERT INTO reminders (user_key, text, due_utc, due_ts, zone, status, created_at) "
            "VALUES (?, 'call mom', ?, ?, 'Asia/Taipei', 'scheduled', ?)",
            (ALICE, T0.isoformat(), T0.timestamp(), T0.isoformat()),
        )
        conn.commit()
    finally:
        conn.close()
    assert open_state(db) == ["m009_reminder_anchor"]
    state = StateDB(db, (*MIGRATIONS, NUMBERS))  # the reminders' own later column too
    try:
        store = ReminderStore(state)
        [old] = store.of_user(ALICE)
        new = store.add(ALICE, "tea", due=T0, zone="Asia/Taipei", now=T0, anchor=INSTANT)
        assert (old.text, old.anchor, new.anchor) == ("call mom", WALL, INSTANT)
        assert (old.number, new.number) == (1, 2)  # an older row is numbered as it was made
    finally:
        state.close()
    assert [name for name, _ in record_of(db)] == [*NAMES, NUMBERS.name]


# -- 4: the memory page --------------------------------------------------------------------
def test_a_file_from_before_the_memory_page_gains_its_tables(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    open_state(db, MIGRATIONS[:3])  # the version before migration 4
    assert open_state(db) == NAMES[3:]  # migration 4 and those after it
    assert {"web_login_links", "web_sessions", "injection_history"} <= tables_of(db)
    assert [name for name, _ in record_of(db)] == NAMES
