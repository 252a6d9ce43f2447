"""Sessions: concurrent appends, corrupt files, the latest session."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from history.sessions import Session, SessionError, SessionStore


async def test_forty_concurrent_appends_lose_nothing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "history")

    async def one(i: int) -> None:
        async with store.locked("telegram_42") as session:
            await asyncio.sleep(0)  # let the others try to interleave
            session.append("user", f"message {i} 第{i}則")
            await asyncio.sleep(0)
            session.append("assistant", f"reply {i}")

    await asyncio.gather(*(one(i) for i in range(40)))
    saved = SessionStore(tmp_path / "history").load("telegram_42")
    contents = [m.content for m in saved.messages]
    assert len(contents) == 80
    assert sorted(c for c in contents if c.startswith("message")) == sorted(
        f"message {i} 第{i}則" for i in range(40)
    )
    # each reply directly follows its own message: no turn was split by another
    for user, reply in zip(contents[::2], contents[1::2], strict=True):
        assert reply == "reply " + user.split()[1]


async def test_truncated_file_is_quarantined_and_a_new_session_works(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "history")
    async with store.locked("cli_bob") as session:
        session.append("user", "hello 你好")
    path = store.path("cli_bob")
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")

    async with store.locked("cli_bob") as session:
        assert session.messages == []
        assert session.kept_as.startswith("cli_bob.json.corrupt-")
        session.append("user", "still here 還在")
    aside = [p for p in path.parent.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == text[: len(text) // 2]

    again = store.load("cli_bob")  # reported once: the next load is clean
    assert again.kept_as == ""
    assert [m.content for m in again.messages] == ["still here 還在"]


def test_wrong_shapes_are_quarantined_too(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    for i, bad in enumerate(["[1, 2]", '{"id": "x", "messages": [{"role": 3}]}', "\xff\xfe"]):
        sid = f"cli_user{i}"
        store.path(sid).parent.mkdir(parents=True, exist_ok=True)
        store.path(sid).write_text(bad, encoding="utf-8")
        assert store.load(sid).kept_as
        assert not store.path(sid).exists()


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    when = datetime(2026, 2, 8, 12, 0, tzinfo=UTC)
    session = Session("telegram_7")
    session.append("user", "決定用 SQLite", when, msg_id="tg-1")
    session.messages[0] = session.messages[0].__class__(
        "user", "決定用 SQLite", when, summary="Goal: - | Decision: 用 SQLite | Todo: - | Facts: -"
    )
    session.idle_summarized_through = when
    store.save(session)
    loaded = store.load("telegram_7")
    assert loaded.messages == session.messages
    assert loaded.idle_summarized_through == when
    assert json.loads(store.path("telegram_7").read_text("utf-8"))["id"] == "telegram_7"


def test_load_latest_picks_the_most_recently_updated(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    assert store.load_latest() is None
    for n, sid in enumerate(["cli_a", "cli_b", "telegram_1"]):
        s = Session(sid)
        s.append("user", sid, datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=n))
        store.save(s)
        os.utime(store.path(sid), ns=(10**18 + n, 10**18 + n))
    latest = store.load_latest()
    assert latest is not None and latest.id == "telegram_1"
    cli = store.load_latest("cli_")
    assert cli is not None and cli.id == "cli_b"


def test_unsafe_session_ids_are_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    for bad in ["../etc", "a/b", "", ".hidden"]:
        with pytest.raises(SessionError):
            store.path(bad)


async def test_an_unchanged_session_is_not_rewritten(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    async with store.locked("cli_x") as session:
        pass
    assert not store.exists("cli_x")  # nothing happened, so no file
    async with store.locked("cli_x") as session:
        session.append("user", "hi")
    before = store.path("cli_x").stat().st_mtime_ns
    async with store.locked("cli_x"):
        pass
    assert store.path("cli_x").stat().st_mtime_ns == before


async def test_a_failing_turn_keeps_the_user_message(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with pytest.raises(RuntimeError):
        async with store.locked("cli_x") as session:
            session.append("user", "Ollama is down but keep this")
            raise RuntimeError("LLM down")
    assert [m.content for m in store.load("cli_x").messages] == ["Ollama is down but keep this"]
