"""Signals the bot's own choices move cannot feed on themselves (issue 24; real e5)."""

from __future__ import annotations

from datetime import timedelta

from tests.agent.conftest import USER, Env

TEA = "我最喜歡的飲料是烏龍茶"


async def test_a_memory_injected_every_turn_counts_once_per_conversation(e5_env: Env) -> None:
    env = e5_env
    entry = env.services.memory.remember(USER, TEA, now=env.clock - timedelta(days=1))
    for question in ("我最喜歡喝什麼飲料？", "那我平常喝什麼茶？", "我喜歡的飲料是哪一種？"):
        env.fake.queue_chat("烏龍茶。")
        reply = await env.agent.respond(env.msg(question))
        assert entry.id in {m.id for m in reply.injected}
    assert env.services.access.get(USER, entry.id).count == 1
    env.clock += timedelta(hours=2)  # a later conversation uses it once more
    env.fake.queue_chat("烏龍茶。")
    await env.agent.respond(env.msg("我最喜歡喝什麼飲料？"))
    assert env.services.access.get(USER, entry.id).count == 2
