"""The tool loop through the real ollama client: bounded rounds, errors answered to the model."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from agent.llm import ToolCall
from agent.ollama_client import OllamaChat
from agent.tools import (
    MAX_TOOL_ROUNDS,
    SCHEMAS,
    ToolArgumentError,
    ToolBox,
    check_arguments,
    run_tool_loop,
)
from tests.fakes.ollama_server import FakeOllama, tool_reply


def _box(calls: list[dict[str, Any]]) -> ToolBox:
    async def search(args: dict[str, Any]) -> Mapping[str, Any]:
        calls.append(args)
        return {"results": [{"id": "m-1", "text": "我喜歡咖啡"}]}

    return ToolBox({"memory_search": search})


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


async def test_tool_result_goes_back_to_the_model(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat(tool_reply("memory_search", query="咖啡"), "你喜歡咖啡。")
    calls: list[dict[str, Any]] = []
    resp = await run_tool_loop(
        OllamaChat(fake_ollama.url), [{"role": "user", "content": "?"}], _box(calls)
    )
    assert resp.content == "你喜歡咖啡。" and calls == [{"query": "咖啡"}]
    second = fake_ollama.chat_requests[1]
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "memory_search"
    assert _tool_results(second) == [{"results": [{"id": "m-1", "text": "我喜歡咖啡"}]}]


async def test_unknown_tool_and_bad_arguments_are_answered_as_errors(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.queue_chat(
        tool_reply("rm_rf", path="/"),
        tool_reply("memory_search", limit="many"),  # no query, limit not a number
        "done",
    )
    calls: list[dict[str, Any]] = []
    resp = await run_tool_loop(
        OllamaChat(fake_ollama.url), [{"role": "user", "content": "?"}], _box(calls)
    )
    assert resp.content == "done" and calls == []
    results = _tool_results(fake_ollama.chat_requests[2])
    assert "unknown tool 'rm_rf'" in results[0]["error"]
    assert "bad arguments for memory_search" in results[1]["error"]


async def test_tool_loop_stops_after_four_rounds(fake_ollama: FakeOllama) -> None:
    fake_ollama.chat_handler = lambda body: (
        tool_reply("memory_search", query="again") if body.get("tools") else "giving up"
    )
    calls: list[dict[str, Any]] = []
    box = _box(calls)
    resp = await run_tool_loop(
        OllamaChat(fake_ollama.url), [{"role": "user", "content": "?"}], box
    )
    assert calls == [{"query": "again"}]  # the same call runs once in a turn, then is answered
    assert [r.reused for r in box.records] == [False] + [True] * (MAX_TOOL_ROUNDS - 1)
    assert len(fake_ollama.chat_requests) == MAX_TOOL_ROUNDS + 1
    assert not fake_ollama.chat_requests[-1].get("tools")  # last call offers no tools
    assert resp.content == "giving up"


async def test_a_failing_handler_is_an_error_for_the_model() -> None:
    async def broken(args: dict[str, Any]) -> Mapping[str, Any]:
        raise RuntimeError("disk on fire")

    box = ToolBox({"memory_search": broken})
    result = await box.call(ToolCall("memory_search", {"query": "x"}))
    assert result == {"error": "memory_search failed: disk on fire"}


def test_check_arguments() -> None:
    schema = SCHEMAS["memory_search"]
    assert check_arguments(schema, '{"query": "咖啡", "limit": "3"}') == {
        "query": "咖啡",
        "limit": 3,
    }
    for bad in ("{not json", "[1]", {"query": ""}, {"query": "x", "evil": 1}, {"query": 5}):
        with pytest.raises(ToolArgumentError):
            check_arguments(schema, bad)
