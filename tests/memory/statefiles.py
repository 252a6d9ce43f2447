"""Reading a pcai.db from the outside, for the migration tests (no StateDB in the way)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from bot.schema import SHIPPED as MIGRATIONS
from memory.base.db import connect
from memory.state.migrations import TABLE, Migration
from memory.state.statedb import StateDB

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=TPE)
ALICE = "telegram_1001"
NAMES = [m.name for m in MIGRATIONS]


def rows_of(path: Path) -> dict[str, list[tuple[Any, ...]]]:
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


def schema_of(path: Path) -> set[tuple[str, str, str]]:
    conn = connect(path, vec=False)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name != ? AND sql IS NOT NULL",
            (TABLE,),
        ).fetchall()
        return {(str(r[0]), str(r[1]), str(r[2])) for r in rows}
    finally:
        conn.close()


def record_of(path: Path) -> list[tuple[str, int]]:
    conn = connect(path, vec=False)
    try:
        return [(str(r[0]), int(r[1])) for r in conn.execute(f"SELECT name, adopted FROM {TABLE}")]
    finally:
        conn.close()


def digest_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def open_state(path: Path, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[str]:
    state = StateDB(path, migrations)
    try:
        return state.migrated
    finally:
        state.close()


def tables_of(db: Path) -> set[str]:
    conn = connect(db, vec=False)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    finally:
        conn.close()
    return {str(r[0]) for r in rows}
