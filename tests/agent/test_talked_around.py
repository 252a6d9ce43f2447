"""Memories a conversation talks around reach the prompt (issue 32), in English and Chinese.

Real e5 and real turns. A confirmed memory the conversation never names fuses low, and the
person's lines of earlier conversations, told in the same words, outscore it; it still takes
an L2 slot (agent.selection.memories_first, agent.query.with_memories_below).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent.build import agent_worker
from agent.selection import L2
from agent.types import InjectedMemory
from tests.agent.conftest import USER, Env

CASES = {
    "en": (
        "Bart danced at the Christmas party and felt very happy.",
        [
            "My friend asked me to do a magic trick at her party.",
            "Magic tricks at a party are fun, I practised one with cards.",
            "The party magic show went well, everyone clapped.",
            "I want to learn another magic trick for the next party.",
            "A magic trick with coins could be good for a party.",
            "I bought a magic kit for parties.",
        ],
        [
            "Hey, I'm going to perform a magic trick at the New Year's Eve party!",
            "I get a bit nervous too, any tips to relax?",
            "I'm really looking forward to that evening; I want to make it very special!",
        ],
    ),
    "zh": (
        "我在聖誕派對上跳舞，覺得很開心",
        [
            "朋友請我在她的派對上表演魔術",
            "派對上表演魔術很好玩，我練了一個撲克牌魔術",
            "派對的魔術表演很順利，大家都鼓掌",
            "下次派對我想學另一個魔術",
            "派對上可以表演硬幣魔術",
            "我買了一套派對用的魔術道具",
        ],
        [
            "跨年晚會我要上台表演魔術！",
            "我有點緊張，有什麼放鬆的方法嗎？",
            "好期待那天晚上，我想讓它很特別！",
        ],
    ),
}


async def _chatted(env: Env, earlier: list[str], lines: list[str]) -> list[InjectedMemory]:
    """The L2 items injected at the last of ``lines``, a week after ``earlier``."""
    worker = agent_worker(env.agent)
    for line in earlier:
        await env.agent.respond(env.msg(line))
    env.clock += timedelta(days=7)
    await env.agent.new_session(USER, now=env.clock)
    assert await worker.settle(300)
    reply = None
    for line in lines:
        reply = await env.agent.respond(env.msg(line))
    assert reply is not None and not reply.error
    return [m for m in reply.injected if m.layer == L2]


@pytest.mark.parametrize("lang", sorted(CASES))
async def test_a_memory_the_conversation_talks_around_reaches_the_prompt(
    e5_env: Env, lang: str
) -> None:
    """Fails on the old turn: the earlier conversation's lines took every L2 slot (and in
    English the dance memory fused under min_score as well)."""
    memory, earlier, lines = CASES[lang]
    entry = e5_env.services.memory.remember(USER, memory)
    injected = await _chatted(e5_env, earlier, lines)  # a week after the earlier lines
    assert entry.id in [m.id for m in injected], injected
    # The memory comes first; other conversations' lines take at most the slots it leaves.
    assert injected[0].id == entry.id, injected


COOKING = [
    "On weekends I like to cook a big Sunday roast.",
    "I cook pasta from scratch on Saturday evenings.",
    "At the weekend I bake bread and cinnamon rolls.",
    "I cook a curry for my friends on Saturday nights.",
    "On Sunday mornings I cook pancakes for everyone.",
    "I like cooking soup at the weekend when it is cold.",
    "I grill vegetables and fish on summer weekends.",
]


async def test_an_earlier_line_at_par_leaves_the_slots_to_the_memories(e5_env: Env) -> None:
    """The person's earlier lines about cooking (one retells a memory) score at par with the
    memories: every slot goes to a confirmed memory. Fails on the old turn, where such a line
    always took a slot (``l2_other_margin`` 0: the curry line took the curry memory's)."""
    mems = [e5_env.services.memory.remember(USER, text).id for text in COOKING]
    earlier = [
        "I made a big pot of soup at the weekend, it was lovely.",
        "Saturday dinner with friends: I cooked a curry for them.",
    ]
    injected = await _chatted(e5_env, earlier, ["I want to cook something nice this weekend."])
    assert len(injected) == 6 and {m.id for m in injected} <= set(mems), injected


async def test_an_earlier_line_that_names_the_turns_subject_still_takes_a_slot(
    e5_env: Env,
) -> None:
    """What the person only said in an earlier conversation (never confirmed as a memory)
    still reaches the prompt when the new turn is about it: it stands well above the memories."""
    for text in COOKING:
        e5_env.services.memory.remember(USER, text)
    earlier = ["My sister Ingrid flies in from Reykjavik on Friday.", "Let's talk later."]
    injected = await _chatted(e5_env, earlier, ["When does Ingrid land from Reykjavik?"])
    said = [m for m in injected if "Ingrid" in m.text]
    assert said and said[0].source.startswith("memory/"), injected
