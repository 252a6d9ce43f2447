"""The compaction part of a prompt stays within ``compaction_prompt_tokens`` (issue 15 item 6).

After compaction (docs/conversations.md) the prompt holds the session's note and, when search
finds them, the compaction summaries of MEMORY_FULL.md. Together they cost at most the budget
(the note at most half of it), however long the model's summary is, and what was compacted away is
still reachable: a fact only the assistant's reply and the summary hold, and one the user
said in a trimmed turn.
"""

from __future__ import annotations

from typing import Any

from agent.build import agent_worker
from agent.prompt import MEMORY_CLOSE, MEMORY_OPEN
from history.compaction_note import MESSAGE_OVERHEAD_TOKENS, NOTE_PREFIX
from tests.agent.conftest import USER, Env
from tests.agent.test_compaction_in_turn import LAST, TALK
from tests.fakes.chat_requests import instruction_of

# A model that writes a very long topic line (the note's gist) and keeps every detail.
LONG_TOPIC = "十月高雄三人旅行計畫，" + (
    "包含高鐵、旅館、旗津騎車、瑞豐夜市、蓮池潭、左營海鮮、衛武營表演與雨天備案的完整行程討論，"
    * 4
)
SUMMARY = (
    f"- **主題：** {LONG_TOPIC}\n"
    "- **決定：** 10月18日出發、10月19日晚上七點回程，住駁二附近\n"
    "- **待辦：** 我訂高鐵票，阿明訂旅館\n"
    "- **數字／人名／日期：** 每人一萬二千元；阿明、小華；衛武營票價八百元；"
    "旅館訂房代號 KH-2291"
)
BOOKING = "KH-2291"  # said by the assistant only: the daily log does not hold it


def _model(body: dict[str, Any]) -> str:
    system = instruction_of(body)
    if system.startswith("Summarise this conversation"):
        return SUMMARY
    if system.startswith("Summarise the message"):
        return "Goal: -\nDecision: -\nTodo: -\nFacts: -"
    if "阿明負責訂旅館" in str(body["messages"][-1]["content"]):
        return f"好的，阿明已經訂好了，旅館訂房代號 {BOOKING}。"
    return "好的，聽起來不錯。"


def _compaction_part(env: Env, messages: list[dict[str, Any]]) -> tuple[int, int]:
    """(note tokens, tokens of the memory block's MEMORY_FULL.md items) of one prompt."""
    counter = env.agent.counter
    note = sum(
        counter.count(str(m["content"])) + MESSAGE_OVERHEAD_TOKENS
        for m in messages
        if NOTE_PREFIX in str(m["content"])  # the note, framed as data (agent.framing)
    )
    body = env.memory_block().removesuffix(MEMORY_CLOSE).rstrip("\n")
    items = body.split("\n- [")[1:]  # an item's own lines are indented: no "- [" inside
    summaries = sum(
        counter.count(f"- [{item}") + 1
        for item in items
        # MEMORY_FULL.md's blocks and the daily log's record of them
        if "MEMORY_FULL.md" in item.split("]", 1)[0] or "] summary: " in item
    )
    return note, summaries


async def test_the_compaction_part_stays_in_budget_and_early_facts_stay_reachable(
    e5_env: Env,
) -> None:
    env = e5_env
    env.fake.chat_handler = _model
    worker = agent_worker(env.agent)
    for text in TALK:
        assert not (await env.agent.respond(env.msg(text))).error
    await env.agent.respond(env.msg(LAST))
    assert await worker.settle(300)  # e5 indexing on a loaded machine can take a while
    budget = env.services.settings.history.compaction_prompt_tokens
    session = env.services.sessions.load(USER)
    assert session.messages[0].content.startswith(NOTE_PREFIX)  # compacted
    assert "MEMORY_FULL.md § 對話摘要 (" in session.messages[0].content  # still points there
    assert LONG_TOPIC in (env.services.memory.paths(USER).root / "MEMORY_FULL.md").read_text(
        "utf-8"
    )

    for question, answer in [
        ("旅館的訂房代號是什麼？", BOOKING),  # only the assistant and the summary said it
        ("衛武營的表演票價一張多少錢？", "八百元"),  # a trimmed user turn
    ]:
        await env.agent.respond(env.msg(question))
        messages = env.fake.chat_requests[-1]["messages"]
        note, summaries = _compaction_part(env, messages)
        assert 0 < note <= budget // 2
        assert note + summaries <= budget
        shown = "\n".join(str(m["content"]) for m in messages[1:])
        assert answer in shown, question
        if answer == BOOKING:  # reached through the summary, cut to what the question asks
            assert summaries > 0 and MEMORY_OPEN in shown
            assert BOOKING in env.memory_block() and LONG_TOPIC not in env.memory_block()
