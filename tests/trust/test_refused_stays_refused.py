"""What the person refused stays refused (issue 32).

A proposal answered "no", or left to expire, is never injected as a memory: the person's
line stays in the day's log as conversation, and whatever finds it again (the turn's
search, ``/search``, the model's ``memory_search``) labels it as said in conversation that
day. The model is the fake Ollama; the terminal front desk, the agent, its background
worker, the index and the search are the real ones.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from agent.build import agent_worker
from agent.ollama_client import OllamaChat
from agent.prompt import carried_memories
from bot.app import Services, build_agent
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.tool_replies import tool_reply

USER = "cli_ann"
SAID = "I love durian, I eat it every weekend at the night market"
PROPOSED = "Ann loves durian and eats it every weekend"
QUESTION = "Which fruit should I bring to the night market party this weekend?"


def _day() -> str:
    return datetime.now().astimezone().strftime("%Y-%m-%d")


async def _refuse_then_ask(services: Services, fake: FakeOllama, answer: str) -> str:
    """Ann says a line, the model proposes it, she says ``answer`` (or it expires), /new,
    then she asks about it and searches for it. Returns what the terminal printed."""
    agent = build_agent(services, OllamaChat(fake.url, services.settings.chat_model))
    worker = agent_worker(agent)
    await worker.start()
    out = io.StringIO()
    try:
        chat = TerminalChat(backend_for(services), USER, out)
        fake.queue_chat(tool_reply("memory_save", text=PROPOSED), "Shall I keep that?")
        await chat.handle(SAID)
        [waiting] = services.confirm.pending(USER, datetime.now().astimezone())
        if answer == "expire":
            later = waiting.expires_at + timedelta(seconds=1)
            assert [p.id for p in services.confirm.expire_due(later)] == [waiting.id]
        else:
            await chat.handle(answer)
        assert services.memory.entries(USER) == []
        await chat.handle("/new")  # the line leaves the history window: only search finds it
        assert await worker.settle(60)
        fake.queue_chat("Maybe some mangoes.")
        await chat.handle(QUESTION)
        fake.queue_chat(tool_reply("memory_search", query="durian"), "Found it.")
        await chat.handle("What did I say about durian?")
        await chat.handle("/search durian")
        assert await worker.settle(60)
    finally:
        await worker.stop()
    return out.getvalue()


def _check(fake: FakeOllama, printed: str) -> None:
    asked = [i for i, r in enumerate(fake.chat_requests) if QUESTION in json.dumps(r)]
    messages: list[Any] = fake.chat_requests[asked[0]]["messages"]
    prompt = "\n".join(str(m.get("content") or "") for m in messages)
    # After the refusal, the proposal's own words never come back, in any prompt.
    assert all(PROPOSED not in json.dumps(r) for r in fake.chat_requests[asked[0] :])
    # Her line is still found (it is what she said) ...
    lines = [ln for ln in carried_memories(messages).splitlines() if "durian" in ln]
    assert lines and "durian" in prompt
    # ... but only ever as said in conversation that day, never as a memory.
    assert all(f"said in conversation on {_day()}" in ln for ln in lines), lines
    assert all("MEMORY.md" not in ln for ln in lines)
    # The model's own search sees it as conversation too.
    tools = [m for m in fake.chat_requests[-1]["messages"] if m.get("role") == "tool"]
    results = json.loads(tools[-1]["content"])["results"]
    assert results and all(r["kind"] == "said in conversation" for r in results)
    # And so does the person's /search.
    found = [ln for ln in printed.splitlines() if ln.startswith("1. ")]
    assert found and f"said in conversation on {_day()}, not a memory" in found[-1]


@pytest.mark.parametrize("answer", ["no", "/discard", "expire"])
async def test_a_refused_proposal_never_reaches_the_prompt_as_a_memory(
    services: Services, fake_ollama: FakeOllama, answer: str
) -> None:
    _check(fake_ollama, await _refuse_then_ask(services, fake_ollama, answer))
