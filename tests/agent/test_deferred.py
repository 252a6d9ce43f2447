"""Work that can wait: the turn answers, the worker indexes, compacts and records topics.

Real services on a temporary data dir, the fake Ollama for the model and the embedder. A
"restart" builds the services again over the same data dir, as a new process would. Who runs
the worker, and what runs beside it, is in ``test_deferred_running.py``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.build import agent_worker
from agent.deferred import BACKGROUND_NICE, KIND_COMPACT, KIND_TOPICS, Task
from history.compaction import NOTE_PREFIX
from history.sessions import KIND_COMPACTION, SessionStore
from memory.base.logs import parse_log
from tests.agent.deferred_world import SMALL, USER, WORD, World, open_world, summarising_model
from tests.fakes.chat_requests import instruction_of
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


async def test_the_turn_embeds_only_the_query_and_the_worker_indexes_within_one_tick(
    world: World,
) -> None:
    await world.worker.start()
    try:
        before = len(world.fake.embed_requests)
        reply = await world.agent.respond(world.msg(f"我上次說過喜歡{WORD}嗎？", 1))
        returned = asyncio.get_running_loop().time()
        assert not reply.error
        # The turn embedded the message once, as the query, a Traditional line too (only the
        # memories' views are read in Simplified); no passage was embedded in it.
        turn_inputs = [r["input"] for r in world.fake.embed_requests[before:]]
        assert turn_inputs == [[f"我上次說過喜歡{WORD}嗎？"]]
        assert not world.indexed(1)  # the turn did not wait for the indexing
        while not world.indexed(1):
            assert asyncio.get_running_loop().time() - returned < world.worker.tick
            await asyncio.sleep(0.01)
    finally:
        await world.worker.stop()
    # The worker embedded the record once, as a passage (with its context).
    passages = [r["input"] for r in world.fake.embed_requests[before + 1 :]]
    assert len(passages) == 1 and sum(WORD in t for t in passages[0]) == 1
    # Indexed and embedded: search finds it (and, a bare question, drops it as noise).
    found = world.services.memory.search_explained(USER, WORD)
    seen = [(d.chunk.text, d.stage) for d in found.dropped if WORD in d.chunk.text]
    assert seen == [(f"user: 我上次說過喜歡{WORD}嗎？", "noise")]
    assert world.agent.work.count() == 0


async def test_a_stop_before_the_worker_ran_loses_nothing_and_a_restart_indexes(
    world: World, tmp_path: Path, clock: datetime
) -> None:
    await world.agent.respond(world.msg(f"記得我喜歡{WORD}", 1))
    await world.agent.respond(world.msg("還有熱可可", 2))
    assert world.agent.work.count(USER) >= 2  # queued before the replies went out
    world.services.close()  # the process stops before its worker took a row

    again = open_world(tmp_path / "botmemory", world.fake, clock, **SMALL)
    try:
        assert not again.indexed(1) and not again.indexed(2)
        before = len(again.fake.embed_requests)
        async with again.worker:
            assert await again.worker.settle()
        assert again.indexed(1) and again.indexed(2)
        # Both messages of the day's log embedded in one batch, not one call each.
        assert len(again.fake.embed_requests) - before == 1
        assert again.agent.work.count() == 0
    finally:
        again.services.close()


async def test_compaction_is_written_then_trimmed_by_the_worker_not_the_turn(
    world: World,
) -> None:
    for n in range(1, 4):
        await world.agent.respond(world.msg(f"第 {n} 件事：{WORD} 要買 {n} 盒", n))
    # The third turn reached the threshold: it planned the compaction and answered.
    session = world.services.sessions.load(USER)
    assert session.user_turns == 3 and not any(m.kind for m in session.messages)
    assert world.full_md() == ""
    assert world.agent.work.has(USER, KIND_COMPACT)

    assert await world.worker.settle()
    full = world.full_md()
    assert full.count("## 對話摘要 (") == 1 and WORD in full
    day = world.log_rel(3).removeprefix("memory/").removesuffix(".md")
    text = (world.services.memory.paths(USER).root / world.log_rel(3)).read_text("utf-8")
    assert [r.who for r in parse_log(day, text)].count("summary") == 1
    session = world.services.sessions.load(USER)
    assert session.messages[0].kind == KIND_COMPACTION
    assert session.messages[0].content.startswith(NOTE_PREFIX)
    assert session.user_turns == 1  # the last user turn kept
    units = world.services.store.indexed_units(USER, "MEMORY_FULL.md")
    assert units  # the summary is searchable


async def test_the_turn_does_not_wait_for_the_models_summary_and_a_stop_cuts_it(
    world: World, tmp_path: Path, clock: datetime
) -> None:
    release = threading.Event()
    summaries: list[int] = []

    def model(request: dict[str, Any]) -> str:
        if instruction_of(request).startswith("Summarise"):
            summaries.append(1)
            release.wait(20)  # a slow model: the summary takes its time
            return "- 買藍莓鬆餅\n- 三盒"
        return "好的"

    world.fake.chat_handler = model
    try:
        await world.worker.start()
        for n in range(1, 4):
            reply = await asyncio.wait_for(world.agent.respond(world.msg(f"{WORD} {n}", n)), 10)
            assert reply.text == "好的"
        while not summaries:  # the worker is now waiting for the model
            await asyncio.sleep(0.01)
        assert world.full_md() == ""
        await asyncio.wait_for(world.worker.stop(), 5)  # the model call is cut, not awaited
        assert world.agent.work.has(USER, KIND_COMPACT)
    finally:
        release.set()
    world.fake.chat_handler = summarising_model
    world.services.close()

    again = open_world(tmp_path / "botmemory", world.fake, clock, **SMALL)
    try:
        async with again.worker:
            assert await again.worker.settle()
        assert again.full_md().count("## 對話摘要 (") == 1
        assert again.services.sessions.load(USER).messages[0].kind == KIND_COMPACTION
    finally:
        again.services.close()


async def test_a_stop_between_writing_and_trimming_writes_the_summary_once(
    world: World, tmp_path: Path, clock: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(1, 4):
        await world.agent.respond(world.msg(f"{WORD} 第 {n} 盒", n))
    real_save = SessionStore.save

    def dies(self: SessionStore, session: Any) -> None:
        raise OSError("the process stopped here")  # after both files, before the trim

    monkeypatch.setattr(SessionStore, "save", dies)
    await world.worker.run_once()
    assert world.full_md().count("## 對話摘要 (") == 1  # written ...
    assert not any(m.kind for m in world.services.sessions.load(USER).messages)  # not trimmed
    monkeypatch.setattr(SessionStore, "save", real_save)
    world.services.close()

    again = open_world(tmp_path / "botmemory", world.fake, clock, **SMALL)
    try:
        async with again.worker:
            assert await again.worker.settle()
        assert again.full_md().count("## 對話摘要 (") == 1  # ... once
        day = again.log_rel(3).removeprefix("memory/").removesuffix(".md")
        text = (again.services.memory.paths(USER).root / again.log_rel(3)).read_text("utf-8")
        assert [r.who for r in parse_log(day, text)].count("summary") == 1
        assert again.services.sessions.load(USER).messages[0].kind == KIND_COMPACTION
    finally:
        again.services.close()


async def test_a_topic_turn_begun_before_a_stop_is_not_counted_twice(world: World) -> None:
    queue, topics = world.agent.work, world.agent.topics
    when = world.clock + timedelta(minutes=1)
    payload = {"sections": ["待辦"], "known": ["待辦", "教訓"], "time": when.isoformat()}
    queue.add(USER, [Task(KIND_TOPICS, payload)], when)
    [row] = queue.pending()
    queue.started([row.seq])  # a previous process began it ...
    topics.record(USER, ["待辦"], when, ["待辦", "教訓"])  # ... wrote the turn, then stopped
    assert await world.worker.settle()
    state = topics.load(USER)
    assert state is not None and len(state.turns) == 1
    # A row not begun before is recorded even when it looks the same.
    queue.add(USER, [Task(KIND_TOPICS, payload)], when)
    assert await world.worker.settle()
    state = topics.load(USER)
    assert state is not None and len(state.turns) == 2


async def test_a_failing_row_is_retried_later_and_keeps_the_users_order(world: World) -> None:
    queue = world.agent.work
    await world.agent.respond(world.msg(f"{WORD}", 1))
    world.fake.fail_status, world.fake.fail_paths = 500, {"/api/embed"}  # the embedder is down
    await world.worker.run_once()
    # The index row is kept for a retry, and the turn's topic row after it waits with it.
    assert not world.indexed(1) and queue.count(USER) == 2
    assert queue.pending() == []  # neither is due before the retry time
    world.fake.fail_status = None
    async with world.worker:  # a restart retries at once
        assert await world.worker.settle()
    assert world.indexed(1) and queue.count(USER) == 0


async def test_the_worker_serves_only_the_users_it_owns(world: World) -> None:
    other = "cli_bob"
    mine = agent_worker(world.agent, owns=lambda key: key == other)
    await world.agent.respond(world.msg(f"{WORD}", 1))
    assert await mine.settle()
    assert world.agent.work.count(USER) >= 1  # left for the worker that serves USER
    assert await world.worker.settle()
    assert world.agent.work.count(USER) == 0 and world.indexed(1)


async def test_a_greeting_starts_no_embedding_and_the_model_is_asked_after_the_log(
    world: World,
) -> None:
    before = len(world.fake.embed_requests)
    await world.agent.respond(world.msg("你好", 1))
    assert len(world.fake.embed_requests) == before  # no search, so no query embedded

    log_file = world.services.memory.paths(USER).root / world.log_rel(2)
    seen: list[bool] = []

    def model(request: dict[str, Any]) -> str:
        # The log is written beside the search: it must be on disk before the model is asked.
        seen.append("m2" in log_file.read_text("utf-8"))
        return "好的"

    world.fake.chat_handler = model
    await world.agent.respond(world.msg(f"我之前說過喜歡{WORD}嗎？", 2))
    assert seen == [True]


async def test_a_message_the_prompt_still_shows_is_not_injected_again_as_a_memory(
    world: World,
) -> None:
    await world.agent.respond(world.msg(f"我最喜歡的甜點是{WORD}", 1))
    assert await world.worker.settle() and world.indexed(1)  # searchable seconds later ...
    hits = world.services.memory.search(USER, f"我最喜歡的甜點是{WORD}嗎？")
    assert any(h.chunk.unit_id == "m1" for h in hits)
    await world.agent.respond(world.msg(f"我最喜歡的甜點是{WORD}嗎？", 2))
    # ... but it is in the history window of this prompt: not a memory to inject as well.
    assert [m for m in world.agent.why(USER) if m.id.endswith("#m1")] == []


async def test_the_workers_heavy_steps_yield_the_cpu_to_the_turns(world: World) -> None:
    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    here = nice()
    try:
        assert await world.worker.background(nice) == min(19, here + BACKGROUND_NICE)
        assert nice() == here  # the turns' threads keep theirs
    finally:
        await world.worker.stop()
