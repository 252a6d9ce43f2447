"""OpenAIChat against a fake OpenAI-compatible server, through the real ``openai`` client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent.errors import LLMContextError, LLMResponseError, LLMUnavailableError
from agent.openai_client import OpenAIChat, server_facts, wire_messages
from agent.tools import run_tool_loop
from tests.agent.conftest import Env
from tests.agent.test_llm import _dead_url
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.tool_replies import tool_reply


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.stop()


async def test_text_streams_in_pieces_and_usage_is_read(fake: FakeOpenAI) -> None:
    fake.queue_chat("今天天氣很好，我們去散步吧。")
    fake.cached = 7
    pieces: list[str] = []

    async def sink(piece: str) -> None:
        pieces.append(piece)

    llm = OpenAIChat(fake.url, "qwen2.5-7b-instruct", reply_tokens=300)
    resp = await llm.chat([{"role": "user", "content": "hi"}], on_text=sink)
    assert len(pieces) > 1 and "".join(pieces) == resp.content == "今天天氣很好，我們去散步吧。"
    assert resp.usage is not None and resp.usage.cached_tokens == 7
    assert resp.usage.prompt_tokens == fake.prompt_tokens(fake.requests[0])
    body = fake.requests[0]
    assert (body["stream"], body["max_tokens"], body["stream_options"]) == (
        True,
        300,
        {"include_usage": True},
    )


async def test_streamed_tool_calls_are_joined_and_answered_by_id(fake: FakeOpenAI) -> None:
    fake.queue_chat(tool_reply("memory_save", "好的", text="我喜歡喝凍頂烏龍茶"), "記下了。")
    llm = OpenAIChat(fake.url, "qwen2.5-7b-instruct")
    resp = await llm.chat([{"role": "user", "content": "記住"}], [{"type": "function"}])
    assert [(c.name, c.arguments) for c in resp.tool_calls] == [
        ("memory_save", {"text": "我喜歡喝凍頂烏龍茶"})
    ]
    convo = [
        {"role": "user", "content": "記住"},
        resp.as_message(),
        {"role": "tool", "tool_name": "memory_save", "content": '{"ok": true}'},
    ]
    await llm.chat(convo)
    sent = fake.requests[1]["messages"]
    call_id = sent[1]["tool_calls"][0]["id"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == '{"text": "我喜歡喝凍頂烏龍茶"}'
    assert sent[2] == {"role": "tool", "tool_call_id": call_id, "content": '{"ok": true}'}


def test_wire_messages_pairs_each_result_with_its_call() -> None:
    calls = [{"function": {"name": n, "arguments": {}}} for n in ("a", "b")]
    wired = wire_messages(
        [
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "content": "1"},
            {"role": "tool", "content": "2"},
        ]
    )
    ids = [c["id"] for c in wired[0]["tool_calls"]]
    assert len(set(ids)) == 2 and [w["tool_call_id"] for w in wired[1:]] == ids


def test_the_system_text_and_the_memory_block_go_as_one_system_message() -> None:
    wired = wire_messages(
        [
            {"role": "system", "content": "rules"},
            {"role": "system", "content": "<memory>tea</memory>"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "late note"},
        ]
    )
    assert wired == [
        {"role": "system", "content": "rules\n\n<memory>tea</memory>"},
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "late note"},
    ]


async def test_a_prompt_over_the_context_is_a_context_error(fake: FakeOpenAI) -> None:
    fake.n_ctx = 100
    llm = OpenAIChat(fake.url, "qwen2.5-7b-instruct")
    with pytest.raises(LLMContextError, match="exceeds the available context"):
        await llm.chat([{"role": "user", "content": "字" * 2000}])


async def test_server_errors_and_a_dead_server_are_llm_errors(fake: FakeOpenAI) -> None:
    fake.fail_status = 404
    with pytest.raises(LLMResponseError, match="404"):
        await OpenAIChat(fake.url, "nope").chat([{"role": "user", "content": "hi"}])
    fake.fail_status = 503
    with pytest.raises(LLMUnavailableError, match="503"):
        await OpenAIChat(fake.url, "m", retries=0).chat([{"role": "user", "content": "hi"}])
    dead = OpenAIChat(_dead_url() + "/v1", "m", retries=1, backoff_seconds=0.01)
    with pytest.raises(LLMUnavailableError, match="not reachable"):
        await dead.chat([{"role": "user", "content": "hi"}])


async def test_the_tool_loop_runs_over_this_backend(fake: FakeOpenAI) -> None:
    from agent.tools import ToolBox

    seen: list[object] = []

    async def save(args: dict[str, object]) -> dict[str, object]:
        seen.append(args)
        return {"status": "pending"}

    box = ToolBox({"memory_save": save})
    fake.queue_chat(tool_reply("memory_save", text="A 喜歡茶"), "已暫存。")
    resp = await run_tool_loop(OpenAIChat(fake.url, "m"), [{"role": "user", "content": "x"}], box)
    assert resp.content == "已暫存。" and seen == [{"text": "A 喜歡茶"}]


def test_server_facts_read_the_model_and_n_ctx(fake: FakeOpenAI) -> None:
    fake.n_ctx = 2048
    facts = server_facts(fake.url, "qwen2.5-7b-instruct")
    assert (facts.name, facts.context_tokens) == ("qwen2.5-7b-instruct", 2048)


async def test_a_turn_over_this_backend_proposes_what_the_model_saves(
    env: Env, fake: FakeOpenAI
) -> None:
    env.agent.llm = OpenAIChat(fake.url, "qwen2.5-7b-instruct")
    fake.queue_chat(tool_reply("memory_save", text="我最喜歡的茶是凍頂烏龍"), "好的，已暫存。")
    reply = await env.agent.respond(env.msg("記住：我最喜歡的茶是凍頂烏龍"))
    assert not reply.error and reply.text.startswith("好的，已暫存。")
    assert [p.text for p in reply.proposals] == ["我最喜歡的茶是凍頂烏龍"]
    # The tool's result went back to the model as the answer to its call, by id.
    second = fake.requests[1]["messages"]
    call_id = second[-2]["tool_calls"][0]["id"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == call_id
