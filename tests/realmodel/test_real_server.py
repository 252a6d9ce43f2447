"""Real turns against a real model server: llama.cpp's llama-server with SmolLM2-135M.

The small model's answers are not judged; the protocol, streaming, the server's own token
accounting, prompt caching and the context limit are.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.errors import LLMContextError
from agent.openai_client import OpenAIChat, server_facts
from agent.texts import say
from tests.e2e.harness import Emulator, User
from tests.realmodel.bot import RealBot
from tests.realmodel.server import CONTEXT, LlamaServer

ALICE = 1001
SYSTEM = "You are a helpful assistant. Answer in one short sentence. " * 20


async def test_the_reply_streams_and_the_server_counts_prompt_and_cache(
    llama: LlamaServer,
) -> None:
    llm = OpenAIChat(llama.base_url, "smollm2", reply_tokens=24)
    pieces: list[str] = []

    async def sink(piece: str) -> None:
        pieces.append(piece)

    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi there!"}]
    first = await llm.chat(messages, on_text=sink)
    assert len(pieces) > 1 and "".join(pieces) == first.content  # streamed, then whole
    assert first.usage is not None and first.usage.prompt_tokens
    assert first.usage.prompt_tokens > 200  # the server's own count of this prompt
    again = await llm.chat([*messages[:1], {"role": "user", "content": "And hello again?"}])
    assert again.usage is not None and again.usage.cached_tokens is not None
    # The long shared system text came from the server's cache the second time.
    assert again.usage.cached_tokens > 200
    await llm.aclose()


async def test_a_prompt_over_the_context_is_refused_as_a_context_error(
    llama: LlamaServer,
) -> None:
    # What the bot's retry (tests/agent/test_context_fit.py) rests on: llama.cpp's own 400.
    llm = OpenAIChat(llama.base_url, "smollm2", reply_tokens=8)
    story = "My garden has roses, tulips and an old apple tree full of birds. " * 200
    with pytest.raises(LLMContextError, match="exceeds the available context"):
        await llm.chat([{"role": "user", "content": story}])
    await llm.aclose()


def test_the_server_reports_its_context(llama: LlamaServer) -> None:
    facts = server_facts(llama.base_url, "smollm2")
    assert facts.context_tokens == CONTEXT == llama.props()["default_generation_settings"]["n_ctx"]  # type: ignore[index]


def _session(data: Path, user: int) -> list[dict[str, object]]:
    path = data / "history" / f"telegram_{user}.json"
    return list(json.loads(path.read_text(encoding="utf-8"))["messages"])


def test_real_turns_through_the_bot(
    llama: LlamaServer, emulator: Emulator, tmp_path: Path
) -> None:
    bot = RealBot(emulator, llama, tmp_path / "botmemory", tmp_path / "bot.log", str(ALICE))
    bot.start()
    try:
        alice = User(emulator, ALICE, "Alice", language_code="en")
        alice.send("Hello! What is a good name for a cat?")
        reply = alice.wait_for(lambda m: bool(m.get("text")), timeout=240)
        calls = bot.wait_calls(1)
        kept = _session(tmp_path / "botmemory", ALICE)
        assert kept[-1]["role"] == "assistant" and kept[-1]["content"] == reply["text"]
        assert calls[0].prompt > 0 and calls[0].first_token_ms is not None
        alice.send("Thanks. And a good name for a dog?")
        alice.wait_for(
            lambda m: m["message_id"] != reply["message_id"] and bool(m.get("text")), timeout=240
        )
        calls = bot.wait_calls(2)
        # The second turn's prompt begins like the first: the server served that from cache.
        assert calls[-1].cached > 0, bot.text()[-2000:]
        # A message longer than the server's whole context: cut to fit, or refused and cut
        # again; either way the user gets an answer or the one sentence, and nothing is lost.
        long_text = "Please remember this story about my garden and the birds. " * 400
        alice.send(long_text)
        before = len(alice.inbox)
        answer = alice.wait_for(lambda m: alice.inbox.index(m) >= before, timeout=300)
        failures = {say(k, "en") for k in ("down", "garbage", "failed")}
        assert answer.get("text") and answer["text"] not in failures
        # The server's own count of the prompt it answered: it fitted its context.
        assert bot.wait_calls(3)[-1].prompt <= CONTEXT
        kept = _session(tmp_path / "botmemory", ALICE)
        assert any(m["content"] == long_text for m in kept)
    finally:
        bot.stop()
