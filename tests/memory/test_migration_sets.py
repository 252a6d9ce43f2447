"""A pcai.db written by main 1837913 (one list) upgraded in place to the owner sets."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from bot.schema import MIGRATIONS_ALL, SHIPPED
from memory.base.db import connect
from memory.state.migrations import MEMORY_SET, SET_COLUMN, TABLE
from tests.memory.statefiles import open_state, rows_of, tables_of

FIXTURE = Path(__file__).parent / "data" / "pcai_1837913.db"


def _shapes(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's columns as PRAGMA table_info says (name, type, not null, default, pk)."""
    conn = connect(db, vec=False)
    try:
        return {
            t: [tuple(r[1:]) for r in conn.execute(f'PRAGMA table_info("{t}")')]
            for t in sorted(tables_of(db) - {"sqlite_sequence"})
        }
    finally:
        conn.close()


def _record(db: Path) -> list[tuple[str, str]]:
    conn = connect(db, vec=False)
    try:
        return [
            (str(r[0]), str(r[1])) for r in conn.execute(f"SELECT name, {SET_COLUMN} FROM {TABLE}")
        ]
    finally:
        conn.close()


def test_a_file_from_1837913_upgrades_in_place(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    shutil.copyfile(FIXTURE, db)
    before = rows_of(db)
    assert len(before) == 19 and all(before.values())  # one row in each table
    applied = open_state(db, MIGRATIONS_ALL)
    assert applied == [m.name for m in MIGRATIONS_ALL[len(SHIPPED) :]]
    after = rows_of(db)
    # Every row of the 19 tables keeps every value; a later migration may add a column (with
    # its value) at the end: reminders_002_numbers numbers each person's reminders from 1.
    assert {
        t: [r[: len(o)] for r, o in zip(after[t], before[t], strict=True)] for t in before
    } == (before)
    assert [r[len(o) :] for r, o in zip(after["reminders"], before["reminders"], strict=True)] == [
        (1,)
    ]
    fresh = tmp_path / "fresh.db"
    open_state(fresh, MIGRATIONS_ALL)
    assert _shapes(db) == _shapes(fresh)
    sets = {m.name: m.set for m in MIGRATIONS_ALL}
    assert _record(db) == [(name, sets[name]) for name, _ in _record(db)]
    assert [name for name, _ in _record(db)] == [m.name for m in MIGRATIONS_ALL]
    assert open_state(db, MIGRATIONS_ALL) == []  # the next start applies nothing


def test_the_memory_library_alone_opens_the_bots_file(tmp_path: Path) -> None:
    db = tmp_path / "pcai.db"
    shutil.copyfile(FIXTURE, db)
    open_state(db, MIGRATIONS_ALL)
    assert open_state(db, MEMORY_SET) == []  # other owners' rows are not "from the future"
