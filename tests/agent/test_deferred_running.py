"""Who runs the deferred worker (the Telegram app, the terminal chat) and what runs beside it
(a log write during an embedding, indexers racing on one file).

The worlds are those of ``test_deferred.py``: real services, the fake Ollama.
"""

from __future__ import annotations

import asyncio
import io
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from agent.build import agent_worker
from tests.agent.deferred_world import SMALL, USER, WORD, World, open_world, summarising_model
from tests.fakes.ollama_server import FakeOllama


@pytest.fixture
def clock() -> datetime:
    return datetime.now().astimezone().replace(microsecond=0)


@pytest.fixture
def world(tmp_path: Path, fake_ollama: FakeOllama, clock: datetime) -> Iterator[World]:
    fake_ollama.chat_handler = summarising_model
    w = open_world(tmp_path / "botmemory", fake_ollama, clock, **SMALL)
    yield w
    w.services.close()


async def test_the_telegram_app_starts_the_worker_and_stops_it_on_shutdown(world: World) -> None:
    from dataclasses import replace

    from bot.frontdesk.backend import backend_for
    from bot.telegram.application import build_application, post_init, post_shutdown
    from tests.bot.telegram_doubles import RecordingRequest

    await world.agent.respond(world.msg(f"{WORD}", 1))  # left by a previous process
    settings = replace(world.services.settings, telegram_bot_token="123:TEST")
    app = build_application(
        settings, backend_for(world.services), request=RecordingRequest(), background=world.worker
    )
    await app.initialize()
    await post_init(app)
    try:
        assert await world.worker.settle() and world.indexed(1)
    finally:
        await post_shutdown(app)
        await app.shutdown()
    await world.agent.respond(world.msg(f"{WORD} again", 2))
    await asyncio.sleep(0.3)  # a running worker, woken by the turn, would take it now
    assert not world.indexed(2) and world.agent.work.count(USER) >= 1


class WaitingStdin:
    """A user who types nothing and leaves (EOF) once ``until()`` holds (at most 10 s)."""

    def __init__(self, until: Callable[[], bool]) -> None:
        self.until = until

    def readline(self) -> str:
        deadline = time.monotonic() + 10
        while not self.until() and time.monotonic() < deadline:
            time.sleep(0.01)
        return ""


async def test_the_terminal_chat_runs_the_worker_for_its_user(world: World) -> None:
    from bot.chat import TerminalChat
    from bot.frontdesk.backend import backend_for

    await world.agent.respond(world.msg(f"{WORD}", 1))  # left by a previous chat
    worker = agent_worker(world.agent, owns=lambda key: key == USER)
    chat = TerminalChat(backend_for(world.services), USER, io.StringIO(), background=worker)
    await chat.run_async(WaitingStdin(lambda: world.indexed(1)))  # type: ignore[arg-type]
    assert world.indexed(1) and world.agent.work.count(USER) == 0


def _slow_sync(world: World, rel: str) -> threading.Thread:
    sync = threading.Thread(target=world.services.memory.indexer.sync_file, args=(USER, rel))
    sync.start()
    deadline = time.monotonic() + 5
    while not world.fake.embed_requests and time.monotonic() < deadline:
        time.sleep(0.005)  # until the worker's embedding request is on its way
    return sync


async def test_a_log_write_never_waits_for_an_embedding_in_progress(world: World) -> None:
    world.services.daily_log.append_user_message(USER, f"{WORD} 一盒", world.clock, "m1")
    world.fake.delay = 1.0  # a slow embedder
    world.fake.requests.clear()
    sync = _slow_sync(world, world.log_rel(0))
    started = time.monotonic()
    world.services.daily_log.append_user_message(USER, "再一盒", world.clock, "m2")
    assert time.monotonic() - started < 0.5  # the user's lock is not held while embedding
    sync.join()
    world.fake.delay = 0.0


async def test_two_indexers_racing_on_one_file_index_each_record_once(world: World) -> None:
    for n in range(1, 4):
        world.services.daily_log.append_user_message(USER, f"{WORD} {n}", world.clock, f"m{n}")
    world.fake.delay = 0.3
    syncs = [
        threading.Thread(
            target=world.services.memory.indexer.sync_file, args=(USER, world.log_rel(0))
        )
        for _ in range(3)
    ]
    for t in syncs:
        t.start()
    for t in syncs:
        t.join()
    world.fake.delay = 0.0
    rows = world.services.store.conn.execute(
        "SELECT unit_id FROM chunks WHERE user_key=? AND path=?", (USER, world.log_rel(0))
    ).fetchall()
    assert sorted(r[0] for r in rows) == ["m1", "m2", "m3"]
