"""``pcai.db`` as the bot opens it: every owner's migration set, composed in shipped order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.notices import NOTICES_SET
from agent.reminders.schema import REMINDERS_SET
from agent.schema import AGENT_SET
from bot.frontdesk.schema import FRONTDESK_SET
from bot.telegram.open_turns import TELEGRAM_SET
from bot.web.schema import WEB_SET
from memory.state.migrations import MEMORY_SET, SET_COLUMN, SHIPPED_SETS, TABLE, Migration
from memory.state.statedb import StateDB

_SETS = (MEMORY_SET, AGENT_SET, NOTICES_SET, REMINDERS_SET, TELEGRAM_SET, WEB_SET, FRONTDESK_SET)
_BY_NAME = {m.name: m for one in _SETS for m in one}


def m010_migration_sets(conn: Any) -> None:
    """``_migrations.migration_set``: which owner's set each recorded migration belongs to."""
    conn.execute(f"ALTER TABLE {TABLE} ADD COLUMN {SET_COLUMN} TEXT NOT NULL DEFAULT 'memory'")
    for name, owner in SHIPPED_SETS.items():
        conn.execute(f"UPDATE {TABLE} SET {SET_COLUMN}=? WHERE name=?", (owner, name))


# The one list as it shipped (m001-m009, that order: an old file's record is a prefix of it),
# then the record of sets, then each owner's adoption of its tables. A new migration goes at
# the end of its owner's set and here after the ones before it.
SHIPPED: tuple[Migration, ...] = tuple(_BY_NAME[name] for name in SHIPPED_SETS)
MIGRATIONS_ALL: tuple[Migration, ...] = (
    *SHIPPED,
    # its own set: memory.open alone neither applies it nor refuses a file that has it
    Migration("m010_migration_sets", m010_migration_sets, "bot"),
    *(m for one in _SETS for m in one if m.name not in SHIPPED_SETS),
)


class BotStateDB(StateDB):
    """``pcai.db`` with every owner's set unless told otherwise (what the bot opens)."""

    def __init__(self, path: Path, migrations: Sequence[Migration] = MIGRATIONS_ALL) -> None:
        super().__init__(path, migrations)
