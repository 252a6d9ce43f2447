"""Each prompt fits the model's context; a server that cuts or refuses anyway is handled."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent.context_fit import ContextFit, fit_messages, prompt_count, sized_budget, sized_history
from agent.deferred import KIND_COMPACT
from agent.openai_client import OpenAIChat
from agent.prompt import turn_message
from agent.texts import say
from history.config import HistoryConfig
from memory.base.tokens import load_counter
from memory.config import BudgetConfig
from tests.agent.conftest import USER, Env
from tests.fakes.openai_server import FakeOpenAI

COUNTER = load_counter()
WORDS = "the quick brown fox jumps over the lazy dog near the river bank today "


def _prompt(turns: int) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": "You are PCAI."}]
    msgs.append({"role": "system", "content": "MEMORY: " + WORDS * 40})
    for i in range(turns):
        msgs.append(
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i} " + WORDS * 10}
        )
    msgs.append({"role": "user", "content": "and now? " + WORDS * 5})
    return msgs


def test_the_oldest_history_goes_first_then_memory_then_the_message() -> None:
    msgs = _prompt(12)
    full = prompt_count(msgs, COUNTER)
    cut = fit_messages(msgs, COUNTER, full - 300)
    assert prompt_count(cut, COUNTER) <= full - 300
    assert cut[0] == msgs[0] and cut[1] == msgs[1] and cut[-1] == msgs[-1]
    assert cut[2:-1] == msgs[-1 - len(cut[2:-1]) : -1]  # the newest history kept, in order
    bare = fit_messages(msgs, COUNTER, 200)  # no history left, the memory block cut short
    assert prompt_count(bare, COUNTER) <= 200
    assert [m["role"] for m in bare] == ["system", "system", "user"]
    assert bare[0] == msgs[0] and bare[-1] == msgs[-1]
    assert len(bare[1]["content"]) < len(msgs[1]["content"])
    tiny = fit_messages(msgs, COUNTER, 30)  # never the user's message: the caller says so
    assert tiny[-1] == msgs[-1] and tiny[0] == msgs[0]
    assert prompt_count(tiny, COUNTER) > 30


def test_a_prompt_that_fits_is_sent_as_built() -> None:
    msgs = _prompt(2)
    assert fit_messages(msgs, COUNTER, 100_000) == msgs


def test_compaction_and_the_memory_block_follow_the_context() -> None:
    small = ContextFit(context_tokens=4096, reply_tokens=512, tools_tokens=600)
    assert small.prompt_tokens == int(4096 * 0.9) - 512 - 600
    assert sized_history(HistoryConfig(), small).auto_write_threshold_tokens == small.prompt_tokens
    assert sized_budget(BudgetConfig(), small).memory_tokens == small.prompt_tokens // 4
    big = ContextFit(context_tokens=131072)
    assert sized_history(HistoryConfig(), big).auto_write_threshold_tokens == 10000  # the setting
    assert sized_budget(BudgetConfig(), big).memory_tokens == 2000


@pytest.fixture
def openai_env(env: Env) -> Iterator[tuple[Env, FakeOpenAI]]:
    """The agent over a fake OpenAI-compatible server instead of the fake Ollama."""
    fake = FakeOpenAI(model="m")
    env.agent.llm = OpenAIChat(fake.url, "m")
    yield env, fake
    fake.stop()


async def _chat(env: Env, turns: int) -> None:
    for i in range(turns):
        await env.agent.respond(env.msg(f"turn {i}: " + WORDS * 12))


async def test_a_refused_prompt_is_asked_again_cut_to_half(
    openai_env: tuple[Env, FakeOpenAI],
) -> None:
    env, fake = openai_env
    await _chat(env, 10)
    env.agent.fit = ContextFit(context_tokens=100_000, reply_tokens=256, tools_tokens=0)
    probe = await env.agent.respond(env.msg("how long is this prompt?"))
    assert not probe.error
    sent = fake.requests[-1]
    whole, tools = fake.prompt_tokens(sent), fake.prompt_tokens({"tools": sent["tools"]})
    fake.requests.clear()
    fake.n_ctx = tools + (whole - tools) * 3 // 4  # the next prompt is refused, half is not
    fake.queue_chat("a reply that fits")
    reply = await env.agent.respond(env.msg("what did I say first?"))
    assert reply.text == "a reply that fits" and not reply.error
    sizes = [len(r["messages"]) for r in fake.requests]
    assert len(sizes) == 2 and sizes[1] < sizes[0]  # older history dropped for the retry
    assert turn_message(fake.requests[1]["messages"][-1]["content"]) == "what did I say first?"


async def test_a_prompt_refused_twice_is_one_sentence_and_a_compaction(
    openai_env: tuple[Env, FakeOpenAI],
) -> None:
    env, fake = openai_env
    await _chat(env, 6)
    env.agent.fit = ContextFit(context_tokens=8000, reply_tokens=256, tools_tokens=0)
    fake.requests.clear()
    fake.n_ctx = 50  # nothing fits
    reply = await env.agent.respond(env.msg("hello again"))
    assert reply.error and reply.text == say("context_full", "en")
    assert len(fake.requests) == 2  # asked once more, not again and again
    assert env.agent.work.has(USER, KIND_COMPACT)
    session = env.services.sessions.load(USER)
    assert session.messages[-1].content == "hello again"  # the message is kept
