"""OllamaChat streams, sends the same num_ctx and keep_alive on every call, sees a cut prompt."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from agent.errors import LLMContextError
from agent.ollama_client import OllamaChat, _EscapedStream, show_model
from memory.base.tokens import load_counter
from tests.fakes.ollama_server import FakeOllama, tool_reply


async def test_text_reaches_the_sink_before_the_answer_ends(fake_ollama: FakeOllama) -> None:
    # The fake holds its answer after the first chunk until the sink has seen text: a client
    # that waited for the whole answer would see its first piece only after 5 s, with the rest.
    fake_ollama.hold_stream = threading.Event()
    fake_ollama.queue_chat("你好，今天天氣很好，我們去散步吧。")
    pieces: list[str] = []
    held_when_first: list[bool] = []

    async def sink(piece: str) -> None:
        if not pieces:
            held_when_first.append(not fake_ollama.hold_stream.is_set())  # type: ignore[union-attr]
            fake_ollama.hold_stream.set()  # type: ignore[union-attr]
        pieces.append(piece)

    resp = await OllamaChat(fake_ollama.url).chat(
        [{"role": "user", "content": "hi"}], on_text=sink
    )
    assert held_when_first == [True]  # the first piece came while the server still held the rest
    assert (
        len(pieces) > 1 and "".join(pieces) == resp.content == "你好，今天天氣很好，我們去散步吧。"
    )
    assert resp.usage is not None and resp.usage.prompt_tokens and resp.usage.first_token_ms


async def test_a_streamed_tool_call_is_kept(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat(tool_reply("memory_save", "好的", text="我喜歡茶"))
    resp = await OllamaChat(fake_ollama.url).chat([{"role": "user", "content": "記住"}])
    assert resp.content == "好的"
    assert [(c.name, c.arguments) for c in resp.tool_calls] == [
        ("memory_save", {"text": "我喜歡茶"})
    ]


async def test_every_call_sends_the_same_num_ctx_and_keep_alive(fake_ollama: FakeOllama) -> None:
    llm = OllamaChat(fake_ollama.url, context_tokens=8192, keep_alive="30m")
    for text in ("one", "two", "three"):
        await llm.chat([{"role": "user", "content": text}])
    sent = [(b["options"]["num_ctx"], b["keep_alive"]) for b in fake_ollama.chat_requests]
    assert sent == [(8192, "30m")] * 3  # a num_ctx that changed would reload the model
    forever = OllamaChat(fake_ollama.url, keep_alive="-1")
    await forever.chat([{"role": "user", "content": "four"}])
    assert fake_ollama.chat_requests[-1]["keep_alive"] == -1  # seconds: a number, not "-1"


async def test_a_prompt_ollama_cut_raises_a_context_error(fake_ollama: FakeOllama) -> None:
    counter = load_counter()
    llm = OllamaChat(fake_ollama.url, context_tokens=2048, count=counter.count)
    long_text = "我們昨天去了很遠的地方看海，" * 400  # far over 2,048 tokens by any count
    # Ollama answers 200 and reads only num_ctx tokens: the counts show it.
    with pytest.raises(LLMContextError, match="cut the prompt"):
        await llm.chat([{"role": "user", "content": long_text}])
    ok = await llm.chat([{"role": "user", "content": "短訊息"}])
    assert ok.content == "ok"  # a prompt that fits is no error


def test_show_model_reads_the_context_length_and_tools(fake_ollama: FakeOllama) -> None:
    fake_ollama.context_length = 32768
    facts = show_model(fake_ollama.url, "qwen2.5:7b")
    assert (facts.context_tokens, facts.tools) == (32768, True)
    fake_ollama.capabilities = ("completion",)
    assert show_model(fake_ollama.url, "qwen2.5:7b").tools is False


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
async def test_a_reply_with_a_unicode_line_separator_arrives_whole(
    fake_ollama: FakeOllama, separator: str
) -> None:
    """Ollama's encoder writes U+0085 raw inside a JSON string (the fake, U+2028 and U+2029
    too), and the ollama package splits its NDJSON lines as str.splitlines does: a memory
    read back with one in it cut the line mid-string, and the turn failed as an unusable
    answer (the world machine found it). Fails without agent.ollama_client.LineSafeTransport."""
    text = f"記住了：](Goal:{separator}我喜歡茶 {separator}and coffee"
    fake_ollama.queue_chat(text)
    resp = await OllamaChat(fake_ollama.url).chat([{"role": "user", "content": "hi"}])
    assert resp.content == text
    fake_ollama.queue_chat(tool_reply("memory_save", "好的", text=f"a{separator}b"))
    resp = await OllamaChat(fake_ollama.url).chat([{"role": "user", "content": "記住"}])
    assert [c.arguments for c in resp.tool_calls] == [{"text": f"a{separator}b"}]


async def test_a_separator_split_across_chunks_is_escaped_whole() -> None:
    """The stream's chunks may end inside a separator's UTF-8: it is escaped once whole."""

    class Chunks(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[override]
            for piece in (b'{"a":"x\xe2', b"\x80", b"\xa8y\xc2", b'\x85"}\n'):
                yield piece

    out = b"".join([c async for c in _EscapedStream(Chunks())])
    assert out == b'{"a":"x\\u2028y\\u0085"}\n'
    assert json.loads(out) == {"a": "x\u2028y\x85"}
