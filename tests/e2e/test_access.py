"""Strangers: one polite refusal in their language, nothing stored about them anywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memory.base.db import connect
from memory.config import index_path, state_db_path
from tests.e2e.conftest import ALICE, STRANGER
from tests.e2e.harness import BotProcess, Emulator, User

STRANGER_EN = 9998  # a second stranger whose Telegram client is in English
CARD = "4111 1111 1111 1111"


def database_values(path: Path) -> list[str]:
    """Every value of every table in ``path`` (vectors and FTS included), as text."""
    conn = connect(path)
    try:
        tables = [
            str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        assert tables, f"{path} has no tables"
        values: list[str] = []
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                values += [v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in row]
        return values
    finally:
        conn.close()


def test_stranger_is_refused_and_leaves_no_trace(
    emulator: Emulator, start_bot: Callable[[], BotProcess], tmp_path: Path
) -> None:
    bot = start_bot()
    stranger = User(emulator, STRANGER, "Mallory")
    stranger.send(f"hello, remember my card {CARD}")
    refusal = stranger.wait_for(lambda m: bool(m.get("text")))
    assert refusal["text"] == "Sorry, this bot only serves its owner."  # no language: English
    english = User(emulator, STRANGER_EN, "Eve", language_code="en")
    english.send("/remember my locker code is Trudy-8842")
    refusal = english.wait_for(lambda m: bool(m.get("text")))
    assert refusal["text"] == "Sorry, this bot only serves its owner."

    # An allowed user in the same run is served (and writes to both databases), so the
    # refusals were about access and the files below are the ones the bot really used.
    alice = User(emulator, ALICE, "Alice")
    alice.send("/help")
    alice.wait_for(lambda m: "/remember" in (m.get("text") or ""))
    alice.send("/remember 我的鑰匙放在玄關的抽屜")
    alice.wait_for(lambda m: "玄關的抽屜" in (m.get("text") or ""))

    assert bot.terminate() == 0
    data = tmp_path / "botmemory"
    strangers = (str(STRANGER), str(STRANGER_EN))
    assert [p for p in data.rglob("*") if any(s in str(p) for s in strangers)] == []
    secrets = ("4111", "Trudy-8842", "locker code")
    for path in data.rglob("*"):
        if path.is_file() and path.suffix in (".md", ".json"):
            text = path.read_text(encoding="utf-8")
            assert not any(s in text for s in secrets), path
    # Inside the two databases: no row names the strangers or holds what they wrote (a
    # bare id is checked as a whole value: digits inside a timestamp are not an id).
    keys = [f"telegram_{s}" for s in strangers]
    for db in (state_db_path(data), index_path(data)):
        values = database_values(db)
        if db == state_db_path(data):
            assert any("玄關的抽屜" in v for v in values)  # Alice's proposal: rows were read
        assert not set(strangers) & set(values), db
        assert not [v for v in values if any(s in v for s in keys + list(secrets))], db
        # Nor in the files' bytes (freed pages, the write-ahead log).
        raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
        assert not any(s.encode() in raw for s in keys + list(secrets)), db
