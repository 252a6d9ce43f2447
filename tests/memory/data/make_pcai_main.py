"""Make ``pcai_1837913.db``: a ``pcai.db`` as main 1837913 wrote it, one row in each table.

Run once, from a checkout of 1837913 (before issue 29 split the schema into owner sets):
``PYTHONPATH=. python tests/memory/data/make_pcai_main.py``. The upgrade-in-place test
(tests/memory/test_migration_sets.py) opens a copy with today's code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memory.state.statedb import StateDB

OUT = Path(__file__).with_name("pcai_1837913.db")


def _value(table: str, column: str, kind: str, nth: int) -> Any:
    """A plain value per column type, distinct per column so a swapped column shows."""
    if "INT" in kind.upper():
        return 1000 + nth
    if "REAL" in kind.upper():
        return 1700000000.5 + nth
    return f"{table}.{column}"


def main() -> int:
    """Write the fixture (replacing an older one)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{OUT}{suffix}").unlink(missing_ok=True)
    state = StateDB(OUT)
    conn = state.conn
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' "
            "AND name NOT LIKE 'sqlite_%' AND name != '_migrations' ORDER BY name"
        )
    ]
    with state.transaction() as tx:
        for table in tables:
            cols = tx.execute(f'PRAGMA table_info("{table}")').fetchall()
            names = [str(c[1]) for c in cols]
            values = [_value(table, str(c[1]), str(c[2]), i) for i, c in enumerate(cols)]
            marks = ", ".join("?" for _ in names)
            tx.execute(f'INSERT INTO "{table}" ({", ".join(names)}) VALUES ({marks})', values)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")  # one self-contained file in the repository
    state.close()
    print(f"{OUT}: {len(tables)} tables, one row each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
