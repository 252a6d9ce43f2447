"""/why survives a restart: the last prompt's memories are kept in pcai.db."""

from __future__ import annotations

from agent.why import WhyLog
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
