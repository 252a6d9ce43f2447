"""What the backup tests share: a data folder with every kind of data, and reading one back."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from bot.app import Services
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from bot.frontdesk.reminder_desk import reminder_desk_for
from memory.base.db import connect_plain
from memory.base.markdown import parse_memory

PEOPLE = ("cli_ann", "cli_bob")


def terminal(services: Services, key: str) -> TerminalChat:
    """A terminal chat of ``key`` over the real backend (its output kept, not printed)."""
    return TerminalChat(
        backend_for(services), key, io.StringIO(), reminders=reminder_desk_for(services)
    )


async def fill(services: Services) -> None:
    """Two people's memories (typed), reminders (typed), log lines and sessions."""
    for key in PEOPLE:
        chat = terminal(services, key)
        await chat.handle(f"/remember {key} takes the 7:40 train")
        await chat.handle(f"/remember {key} grows tomatoes on the balcony")
        await chat.handle(f"/remind tomorrow 9am call the mother of {key}")
        services.daily_log.append_user_message(
            key, f"{key} says the garden needs water", _now(), f"{key}-m1"
        )
        async with services.sessions.locked(key) as session:
            session.append("user", f"{key} says hello", _now())


def _now() -> datetime:
    return datetime.now(UTC)


def markdown_files(data_dir: Path) -> dict[str, bytes]:
    """Every user's file and every session, by path, as bytes (locks left out)."""
    out = {}
    for top in ("users", "history"):
        for path in sorted((data_dir / top).rglob("*")):
            if path.is_file() and not path.name.endswith(".lock") and path.name != ".lock":
                out[path.relative_to(data_dir).as_posix()] = path.read_bytes()
    return out


def memories(data_dir: Path, key: str) -> list[str]:
    """The texts in ``key``'s MEMORY.md."""
    path = data_dir / "users" / key / "MEMORY.md"
    if not path.exists():
        return []
    return [e.text for e in parse_memory(path.read_text(encoding="utf-8")).entries]


def log_text(data_dir: Path, key: str) -> str:
    """All of ``key``'s daily logs, one after the other."""
    folder = data_dir / "users" / key / "memory"
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md")))


def reminders(data_dir: Path, key: str, status: str = "scheduled") -> list[str]:
    """The texts of ``key``'s reminders in ``status``, read from ``pcai.db`` itself."""
    conn = connect_plain(data_dir / "pcai.db")
    try:
        rows = conn.execute(
            "SELECT text FROM reminders WHERE user_key=? AND status=? ORDER BY id", (key, status)
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]
