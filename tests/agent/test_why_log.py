"""/why survives a restart: the last prompt's memories are kept in pcai.db."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.types import InjectedMemory
from agent.why import KEEP, WhyLog
from memory.state import StateDB
from tests.agent.conftest import USER, Env


async def test_why_is_read_back_by_a_new_process(env: Env) -> None:
    env.services.memory.remember(USER, "我每天早上喝烏龍茶，不加糖", is_core=True)
    env.fake.queue_chat("你早上喝烏龍茶。")
    await env.agent.respond(env.msg("我早上都喝什麼？"))
    before = env.agent.why(USER)
    assert any("烏龍茶" in m.text for m in before)

    state = StateDB(env.services.settings.state_db_path)  # what a restarted bot opens
    try:
        assert WhyLog(state).last(USER) == before
        assert WhyLog(state).last("cli_someone_else") == ()
    finally:
        state.close()


async def test_a_failed_answer_leaves_nothing_to_explain(env: Env) -> None:
    env.services.memory.remember(USER, "我每天早上喝烏龍茶，不加糖", is_core=True)
    env.fake.queue_chat("你早上喝烏龍茶。")
    await env.agent.respond(env.msg("我早上都喝什麼？"))
    env.fake.fail_status, env.fake.fail_paths = 500, {"/api/chat"}
    reply = await env.agent.respond(env.msg("那晚上呢？"))
    assert reply.error and env.agent.why(USER) == ()


def test_the_history_keeps_the_last_replies_that_used_memories(env: Env) -> None:
    log = WhyLog(env.services.state)
    start = datetime(2026, 11, 22, 9, 0).astimezone()
    for i in range(2 * KEEP + 6):  # 23 replies used memories, 23 did not
        used = (InjectedMemory(f"m-{i}", "L2", 0.5, f"memory {i}", "MEMORY.md"),)
        log.record(USER, used if i % 2 == 0 else (), start + timedelta(minutes=i))
    log.record("cli_someone_else", (InjectedMemory("x", "L0", 1.0, "theirs", "MEMORY.md"),), start)
    recent = log.recent(USER)
    # Replies that used nothing are not kept; the newest KEEP that did are, newest first.
    assert KEEP == 20
    assert [memories[0].id for _, memories in recent] == [f"m-{i}" for i in range(44, 5, -2)]
    assert recent[0][0] == (start + timedelta(minutes=44)).isoformat()
    assert log.recent("cli_someone_else")[0][1][0].text == "theirs"
    log.redact(USER, lambda text: text, {"m-44"}, "[forgotten]")
    assert log.recent(USER)[0][1][0].text == "[forgotten]"
