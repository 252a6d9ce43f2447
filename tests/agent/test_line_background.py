"""A person's usual line (agent.background), taken out of the memories' order (agent.query)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from agent.background import BACKGROUND_MIN_LINES, LineBackground
from agent.query import memory_order
from agent.selection import L2
from memory.index.chunks import Chunk, IndexStore
from memory.index.embedders import Vector
from memory.search.hybrid import SearchHit
from tests.agent.conftest import USER, Env

DIM = 8
MADIAL_ZH_TW = Path(__file__).resolve().parents[2] / "bench" / "data" / "madial-zh-tw"


def _unit(*pairs: tuple[int, float]) -> Vector:
    v = np.zeros(DIM, dtype=np.float32)
    for axis, value in pairs:
        v[axis] = value
    return (v / np.linalg.norm(v)).astype(np.float32)


def _hit(cid: int) -> SearchHit:
    chunk = Chunk(cid, "u", "memory", "MEMORY.md", f"m{cid}", 0, "", "", 0, 0, 0.7, "active", 3,
                  (), f"memory {cid}")  # fmt: skip
    return SearchHit(chunk=chunk, score=1.0, vector_similarity=None, bm25_rank=None)


def test_a_memory_near_everything_the_person_says_gives_way_to_the_one_the_turn_is_about() -> None:
    # Axis 0 is how this person talks whatever the topic; axis 1 is this turn's topic. Memory 1
    # sits on the person's usual line, memory 2 on the topic; the search found 1 first.
    usual = _unit((0, 1.0))
    views = {1: _unit((0, 1.0), (1, 0.2)), 2: _unit((0, 0.3), (1, 1.0))}
    latest = _unit((0, 1.0), (1, 0.5))
    earlier = [_unit((0, 1.0), (1, 0.45)), _unit((0, 1.0), (2, 0.3))]
    hits = [_hit(1), _hit(2)]
    assert [h.chunk.id for h in memory_order(hits, views, latest, earlier, 1.0, 2.0)] == [1, 2]
    ordered = memory_order(hits, views, latest, earlier, 1.0, 2.0, background=usual)
    assert [h.chunk.id for h in ordered] == [2, 1]


@pytest.fixture
def store(tmp_path: Path) -> IndexStore:
    return IndexStore(tmp_path / "index.sqlite", "test-model", DIM)


def test_lines_join_after_the_turns_context_and_count_once_enough_joined(
    store: IndexStore,
) -> None:
    bg = LineBackground(store, hold=2, lines=30, min_lines=3)
    said = [_unit((0, 1.0), (i % DIM, 0.5)) for i in range(6)]
    for vec in said[:4]:
        bg.add("u", vec, secret=False)
    # Four lines said, the last two still the turn's context: two joined, fewer than three.
    got = store.line_background("u")
    assert got is not None and got[2] == 2
    assert bg.of("u") is None
    bg.add("u", said[4], secret=False)
    usual = bg.of("u")
    assert usual is not None
    # The decayed mean of the three that joined (each older one weighs 29/30 of the next).
    w = np.array([(29 / 30) ** 2, 29 / 30, 1.0])
    expected = (np.stack(said[:3]) * w[:, None]).sum(axis=0) / w.sum()
    assert np.allclose(usual, expected, atol=1e-6)
    # Nobody else's lines are in it, and nobody else has one.
    assert bg.of("v") is None


async def test_a_line_with_a_secret_never_joins(env: Env) -> None:
    """Through the turn: the line with a password is searched (only the prompt sees it) but
    never joins the stored background; the next line does."""
    store = env.services.memory.searcher.store
    env.services.memory.remember(USER, "I like green tea", now=env.clock)
    env.agent.view.background = LineBackground(store, hold=0, min_lines=1)
    await env.agent.respond(env.msg("what do I drink? my password is Zq2wab9m8k7esu7"))
    assert store.line_background(USER) is None
    await env.agent.respond(env.msg("what do I like to drink in the morning?"))
    got = store.line_background(USER)
    assert got is not None and got[2] == 1


def test_the_usual_line_outlives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    first = IndexStore(path, "test-model", DIM)
    bg = LineBackground(first, hold=0, lines=30, min_lines=2)
    bg.add("u", _unit((0, 1.0)), secret=False)
    bg.add("u", _unit((1, 1.0)), secret=False)
    before = bg.of("u")
    first.conn.close()
    again = LineBackground(IndexStore(path, "test-model", DIM), hold=0, lines=30, min_lines=2)
    after = again.of("u")
    assert before is not None and after is not None and np.allclose(before, after)
    # Another embedder (another size) rebuilds the index: nothing of the old one is read.
    assert LineBackground(IndexStore(path, "other-model", 4), hold=0).of("u") is None


# One person of bench/data/madial-zh-tw (MADial-Bench, MIT; in the repository).
def _bart() -> tuple[list[tuple[str, str]], list[list[str]]]:
    """Bart's memories (date, text) and the person's lines of his first dialogues."""
    mems = []
    for raw in (MADIAL_ZH_TW / "MADial-Bench-zh-memory.json").read_text("utf-8").splitlines():
        for mem in json.loads(raw).values() if raw.strip() else ():
            if int(mem["user-id"]) == 1:
                mems.append((mem["time"], mem["event"]))
    talks = []
    for raw in (MADIAL_ZH_TW / "MADial-Bench-zh-dialogue.json").read_text("utf-8").splitlines():
        row = json.loads(raw) if raw.strip() else None
        if row is None or int(row["user-id"]) != 1:
            continue
        test = row["test-turn"][0]
        lines = [s.strip() for s in row["dialogue"][1:test]]
        talks.append([s.split("「", 1)[1].rstrip("」") for s in lines if s.startswith("<巴特>")])
    return mems, talks


async def test_after_some_talk_the_memory_this_talk_goes_around_reaches_the_prompt(
    e5_env: Env,
) -> None:
    """Real e5 and real turns in Traditional Chinese, Bart's 76 memories: seven earlier talks
    (one a day, each its own session), then one about running a race. The memory of the
    school's mini-marathon reaches the prompt once the person's usual line is taken out of the
    memories' order; read with no background it is left out."""
    env = e5_env
    mems, talks = _bart()
    ids = {}
    for day, text in mems:
        when = datetime.fromisoformat(day).replace(hour=20).astimezone()
        ids[text] = env.services.memory.remember(USER, text, now=when).id
    race = "巴特參加了學校的迷你馬拉松"
    wanted = next(cid for text, cid in ids.items() if text.startswith(race))
    view = env.agent.view
    for talk in talks[:7]:
        env.clock += timedelta(days=1)
        await env.agent.new_session(USER, now=env.clock)
        for line in talk:
            await env.agent.respond(env.msg(line))
    assert view.background.of(USER) is not None  # about twenty lines joined
    joined = env.services.memory.searcher.store.line_background(USER)
    assert joined is not None and joined[2] >= BACKGROUND_MIN_LINES

    async def last_talk() -> list[str]:
        env.clock += timedelta(days=1)
        await env.agent.new_session(USER, now=env.clock)
        reply = None
        for line in talks[7]:
            reply = await env.agent.respond(env.msg(line))
        assert reply is not None and not reply.error
        return [m.id for m in reply.injected if m.layer == L2]

    # The talk read with no background (one that never counts) leaves the memory out...
    store = env.services.memory.searcher.store
    usual = view.background
    view.background = LineBackground(store, hold=4, min_lines=10**6)
    assert wanted not in await last_talk()
    # ... and the same talk again, the person's usual line taken out, brings it.
    view.background = usual
    assert wanted in await last_talk()


def test_a_forgotten_memory_takes_the_persons_usual_line_with_it_and_nobody_elses(
    env: Env,
) -> None:
    """A forgotten line may be one the background averaged: forgetting a memory drops the
    person's background (it is made again from the lines to come); another person's stays."""
    memory = env.services.memory
    store = memory.searcher.store
    kept = memory.remember(USER, "My sister lives in Kaohsiung", now=env.clock)
    memory.remember("cli_bob", "Bob likes green tea", now=env.clock)
    dim = store.dim
    for person in (USER, "cli_bob"):
        store.keep_line_background(person, np.ones(dim, dtype=np.float32), 9.0, 9)
    memory.forget(USER, kept.id)
    assert store.line_background(USER) is None
    bob = store.line_background("cli_bob")
    assert bob is not None and bob[2] == 9
