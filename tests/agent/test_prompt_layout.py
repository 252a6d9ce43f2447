"""Consecutive prompts of a conversation share their prefix up to the turn (docs/prompt.md)."""

from __future__ import annotations

import itertools
from typing import Any

from agent.prompt import turn_message
from history.context import WINDOW_STEP
from tests.agent.conftest import USER, Env

LINES = [
    "我們週末去台南玩好嗎？",
    "What time does the train leave?",
    "我想吃牛肉湯和虱目魚粥",
    "Book a hotel near the station, please.",
    "預算大概一人五千元",
]


def conversation(request: dict[str, Any]) -> list[dict[str, Any]]:
    """A request's conversation: between the head and the user's turn."""
    return list(request["messages"][1:-1])


async def test_each_prompt_extends_the_last_until_a_rebuild_in_the_15_5_shape(env: Env) -> None:
    env.services.memory.remember(USER, "我對花生過敏", is_core=True)
    env.fake.chat_handler = lambda body: "好的，沒問題。Sounds good."
    turns = 20
    # The head carries the date: the turns (a minute apart) must not cross midnight.
    env.clock = env.clock.replace(hour=min(env.clock.hour, 22))
    for i in range(turns):
        assert not (await env.agent.respond(env.msg(LINES[i % len(LINES)]))).error
    requests = env.fake.chat_requests
    assert len(requests) == turns
    # The head (rules, date, preface, the pinned memory) and the tools never changed, in
    # either language; the time and the language are in the user's turn.
    assert len({r["messages"][0]["content"] for r in requests}) == 1
    assert "我對花生過敏" in requests[0]["messages"][0]["content"]
    assert len({str(r["tools"]) for r in requests}) == 1
    assert "reply in English" in requests[1]["messages"][-1]["content"]
    assert "reply in Chinese" in requests[2]["messages"][-1]["content"]
    rebuilds = []
    for n, (before, now) in enumerate(itertools.pairwise(requests), start=1):
        old, new = conversation(before), conversation(now)
        # The turn before (its time and message: the start of what was sent), then its reply.
        sent = before["messages"][-1]["content"]
        if new[: len(old)] == old:
            [user, reply] = new[len(old) :]
            assert sent.startswith(user["content"]) and user["role"] == "user"
            assert turn_message(user["content"]) == turn_message(sent)
            assert reply == {"role": "assistant", "content": "好的，沒問題。Sounds good."}
            continue
        rebuilds.append(n)
        marked = [m for m in new if m["content"].startswith(("[Old] ", "[Summary] "))]
        assert len(new) == min(15, 2 * n) and len(marked) == len(new) - 5
    assert rebuilds == [k // 2 for k in range(WINDOW_STEP, 2 * turns, WINDOW_STEP)]
