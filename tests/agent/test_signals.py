"""Signals the bot's own choices move cannot feed on themselves (issue 24; real e5)."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.selection import L1, L2, Candidate, Selected, Selection
from agent.turn.work import topics_task
from tests.agent.conftest import USER, Env
from tests.memory.daylogs import write_day_log

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


async def test_a_greeting_in_the_log_never_reaches_the_memory_block(e5_env: Env) -> None:
    env = e5_env
    day = (env.clock - timedelta(days=1)).strftime("%Y-%m-%d")
    lines = [
        ("user", "hello, how are you?", "g1"),
        ("user", "I had oolong tea with my sister at the new tea house", "g2"),
        ("user", "what tea do I like?", "g3"),
        ("user", "do I like tea?", "g4"),
    ]
    write_day_log(env.services.library, USER, day, lines)
    env.fake.queue_chat("Oolong.")
    await env.agent.respond(env.msg("which tea did I have with my sister?"))
    block = env.memory_block()
    assert "oolong tea with my sister" in block
    assert "how are you" not in block and "do I like tea?" not in block


def _selected(section: str) -> Selected:
    cand = Candidate(f"m-{section}", L2, 0.5, "text", section=section)
    return Selected(cand, "text", "- text", 3)


def test_the_section_window_records_what_the_search_found_not_what_gating_let_in() -> None:
    gated = Selection((_selected("偏好"), _selected("偏好")), found_sections=("工作",))
    task = topics_task(gated, ["偏好", "工作"], datetime(2026, 1, 1))
    assert task.payload["sections"] == ["工作"]
    scoped = Selection(
        (Selected(Candidate("m-p", L1, 0.5, "t", section="專案"), "t", "- t", 2),),
        found_sections=("偏好",),
    )
    task = topics_task(scoped, ["偏好", "專案"], datetime(2026, 1, 1))
    assert task.payload["sections"] == ["專案", "偏好"]
