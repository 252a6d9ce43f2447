"""OllamaChat against the fake Ollama server, through the real ``ollama`` client."""

from __future__ import annotations

import socket

import pytest

from agent.errors import LLMResponseError, LLMUnavailableError
from agent.ollama_client import OllamaChat
from tests.fakes.ollama_server import FakeOllama, tool_reply


def _dead_url() -> str:
    """A 127.0.0.1 address with nothing listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def test_chat_sends_messages_and_tools(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat("你好！")
    llm = OllamaChat(fake_ollama.url, "qwen2.5:7b")
    tools = [
        {
            "type": "function",
            "function": {
                "name": "t",
                "description": "d",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    resp = await llm.chat([{"role": "user", "content": "hi"}], tools)
    assert resp.content == "你好！" and resp.tool_calls == ()
    body = fake_ollama.chat_requests[0]
    assert body["model"] == "qwen2.5:7b"
    assert body["messages"][0]["content"] == "hi"
    assert body["tools"][0]["function"]["name"] == "t"
    assert body["stream"] is True  # every call streams (on_text or not)


async def test_tool_calls_come_back_as_plain_data(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat(tool_reply("memory_save", text="我喜歡咖啡"))
    resp = await OllamaChat(fake_ollama.url).chat([{"role": "user", "content": "x"}])
    assert [(c.name, dict(c.arguments)) for c in resp.tool_calls] == [
        ("memory_save", {"text": "我喜歡咖啡"})
    ]


async def test_unreachable_is_retried_then_unavailable() -> None:
    llm = OllamaChat(_dead_url(), retries=2, backoff_seconds=0.01)
    with pytest.raises(LLMUnavailableError, match="not reachable"):
        await llm.chat([{"role": "user", "content": "hi"}])


async def test_timeout_is_unavailable(fake_ollama: FakeOllama) -> None:
    fake_ollama.delay = 1.0
    with pytest.raises(LLMUnavailableError, match="did not answer"):
        await OllamaChat(fake_ollama.url, timeout=0.2).chat([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("garbage", [True, False])
async def test_garbage_and_http_errors_are_response_errors(
    fake_ollama: FakeOllama, garbage: bool
) -> None:
    fake_ollama.fail_garbage = garbage
    fake_ollama.fail_status = None if garbage else 500
    with pytest.raises(LLMResponseError):
        await OllamaChat(fake_ollama.url).chat([{"role": "user", "content": "hi"}])


async def test_empty_message_is_a_response_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat("")
    with pytest.raises(LLMResponseError, match="empty"):
        await OllamaChat(fake_ollama.url).chat([{"role": "user", "content": "hi"}])
