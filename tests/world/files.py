"""What the person's data folder holds, read from the files themselves (never from the service).

MEMORY.md through the one codec that writes it, the daily logs through theirs, the reminders
and zones from ``pcai.db`` with a connection of the project's own SQLite (a second SQLite
library in one process would drop the service's file locks), and every byte of every file,
the ``-wal`` included, for secrets.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.base.db import connect
from memory.base.fsutil import read_text
from memory.base.logs import LogRecord, parse_log
from memory.base.markdown import Entry, MemoryStatus, parse_memory
from memory.base.users import UserPaths
from memory.config import index_path, state_db_path

GONE = (MemoryStatus.DEPRECATED, MemoryStatus.ARCHIVED)


@dataclass(frozen=True, slots=True)
class Row:
    """One reminder as ``pcai.db`` holds it."""

    id: int  # the number the person knows it by (their first is #1), what they type
    text: str
    due: datetime
    zone: str
    status: str
    row: int = 0  # the row's own id in pcai.db (the page's forms name it; the person never)


def entries(data_dir: Path, user_key: str) -> tuple[Entry, ...]:
    """Every entry of the person's MEMORY.md, older versions included."""
    path = UserPaths.of(data_dir, user_key).memory_md
    if not path.exists():
        return ()
    return parse_memory(read_text(path)).entries


def live(data_dir: Path, user_key: str) -> dict[str, Entry]:
    """The current memories (not an older version, not archived), by id."""
    return {e.id: e for e in entries(data_dir, user_key) if e.status not in GONE}


def log_records(data_dir: Path, user_key: str) -> list[LogRecord]:
    """Every record of the person's daily logs, oldest day first."""
    folder = UserPaths.of(data_dir, user_key).log_dir
    out: list[LogRecord] = []
    for day in sorted(folder.glob("????-??-??.md")) if folder.exists() else []:
        out += parse_log(day.stem, day.read_text(encoding="utf-8"))
    return out


def user_refs(data_dir: Path, user_key: str) -> list[str]:
    """The message ids of the person's own records in the daily logs, one per record."""
    return [r.ref for r in log_records(data_dir, user_key) if r.who == "user" and r.ref]


def reminders(data_dir: Path, user_key: str) -> list[Row]:
    """The person's reminders, every status."""
    rows = _rows(
        state_db_path(data_dir),
        "SELECT number, text, due_utc, zone, status, id FROM reminders WHERE user_key=? "
        "ORDER BY number",
        (user_key,),
    )
    return [
        Row(int(r[0]), r[1], datetime.fromisoformat(r[2]), r[3], r[4], int(r[5])) for r in rows
    ]


def zone(data_dir: Path, user_key: str) -> str:
    """The zone the person chose with /tz ("" until they do)."""
    conn = connect(state_db_path(data_dir), vec=False)
    try:
        row = conn.execute(
            "SELECT zone FROM reminder_users WHERE user_key=?", (user_key,)
        ).fetchone()
    finally:
        conn.close()
    return str(row[0]) if row else ""


def holding(data_dir: Path, needles: set[str]) -> list[tuple[str, str]]:
    """(file, needle) for every needle found in the bytes of any file of the folder."""
    found = []
    wanted = {n: n.encode("utf-8") for n in needles}
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found += [(str(path.relative_to(data_dir)), n) for n, b in wanted.items() if b in data]
    return found


def markdown(data_dir: Path, user_key: str) -> dict[str, bytes]:
    """Every Markdown file of the person's folder (MEMORY*.md, daily logs, summaries), by
    path relative to the data folder: its bytes."""
    root = UserPaths.of(data_dir, user_key).root
    paths = sorted(root.rglob("*.md")) if root.exists() else []
    return {p.relative_to(data_dir).as_posix(): p.read_bytes() for p in paths if p.is_file()}


@dataclass(frozen=True, slots=True)
class Moment:
    """What one person's data is at one moment, as a restore must give it back."""

    markdown: dict[str, bytes]
    reminders: list[Row]
    zone: str
    log: list[LogRecord]


def moment(data_dir: Path, user_key: str) -> Moment:
    """The person's data as the folder holds it now."""
    return Moment(
        markdown(data_dir, user_key),
        reminders(data_dir, user_key),
        zone(data_dir, user_key),
        log_records(data_dir, user_key),
    )


def index_texts(data_dir: Path, user_key: str) -> list[tuple[str, str]]:
    """(source path, text) of every chunk the search index holds for the person."""
    rows = _rows(
        index_path(data_dir), "SELECT path, text FROM chunks WHERE user_key=?", (user_key,)
    )
    return [(str(r[0]), str(r[1])) for r in rows]


def stray_views(data_dir: Path, user_key: str) -> list[int]:
    """Chunk ids of the person's memory views (memory.index.views) that belong to no memory
    chunk of theirs: a view must go with its memory (forget, edit, undo)."""
    rows = _rows(
        index_path(data_dir),
        "SELECT m.chunk_id FROM memory_view AS m LEFT JOIN chunks AS c "
        "ON c.id = m.chunk_id AND c.user_key = m.user_key AND c.kind = 'memory' "
        "WHERE m.user_key = ? AND c.id IS NULL",
        (user_key,),
    )
    return [int(r[0]) for r in rows]


def _rows(path: Path, sql: str, args: tuple[object, ...]) -> list[Any]:
    """The rows ``sql`` reads from the SQLite file at ``path`` (none when it does not exist)."""
    if not path.exists():
        return []
    conn = connect(path, vec=False)
    try:
        return list(conn.execute(sql, args).fetchall())
    finally:
        conn.close()
