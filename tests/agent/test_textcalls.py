"""Tool calls written as text, and argument aliases: what small local models send instead."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import ollama
import pytest

from agent.llm import LLMResponse, ToolCall
from agent.ollama_client import OllamaChat
from agent.textcalls import extract_text_calls, normalise_arguments, with_text_calls
from agent.tools import SCHEMAS, ToolBox, run_tool_loop
from tests.fakes.ollama_server import (
    JSON_TEXT,
    NO_TOOL_CALL,
    SMALL_MODEL_CLAIM,
    WRONG_NAMES,
    FakeOllama,
    as_json_text,
    tool_reply,
)

NAMES = {"memory_save", "memory_search", "memory_confirm"}
SAVE = ToolCall("memory_save", {"text": "我對花生過敏"})


@pytest.mark.parametrize(
    ("content", "left"),
    [
        ('好的！\n```json\n{"name": "memory_save", "arguments": {"text": "我對花生過敏"}}\n```',
         "好的！"),
        ('```\n{"name": "memory_save", "parameters": {"text": "我對花生過敏"}}\n```', ""),
        ('記下來了 {"name": "memory_save", "arguments": {"text": "我對花生過敏"}} 請確認',
         "記下來了 請確認"),
        ('<tool_call>\n{"name": "memory_save", "arguments": {"text": "我對花生過敏"}}\n'
         "</tool_call>", ""),
        ('<|python_tag|>{"type": "function", "function": {"name": "memory_save", '
         '"arguments": "{\\"text\\": \\"我對花生過敏\\"}"}}', ""),
        ('{"tool_calls": [{"function": {"name": "memory_save", "arguments": '
         '{"text": "我對花生過敏"}}}]}', ""),
        ('{"tool": "memory_save", "args": {"text": "我對花生過敏"}}', ""),
        ('{"name": "memory_save", "text": "我對花生過敏"}', ""),  # arguments beside the name
        ('memory_save(text="我對花生過敏")\nOK', "OK"),
        ("```python\nmemory_save.call(text='我對花生過敏')\n```", ""),
        ('```json\n{"name": "memory_save", "arguments": {"text": "我對花生過敏"}}', ""),  # no end
    ],
)  # fmt: skip
def test_a_call_written_as_text_is_read_and_cut_out(content: str, left: str) -> None:
    found = extract_text_calls(content, NAMES)
    assert found.calls == (SAVE,)
    assert found.content == left
    assert "memory_save" not in found.content and "{" not in found.content


@pytest.mark.parametrize(
    "content",
    [
        'Here is the JSON you asked for:\n```json\n{"name": "Bob", "age": 3}\n```',
        'Config: {"name": "rm_rf", "arguments": {"path": "/"}}',  # not a tool we know
        'Use f(x) = [1, 2] and {"a": 1}; call print(x) to see it.',
        "```python\nprint('hello')\n```",
        "",
    ],
)
def test_other_json_and_code_stay_as_they_are(content: str) -> None:
    found = extract_text_calls(content, NAMES)
    assert found == type(found)(content)


def test_an_unreadable_block_naming_a_tool_is_cut_without_a_call() -> None:
    content = '好的。\n```json\n{"name": "memory_save", "arguments": {"text": 我對\n```\n請確認'
    found = extract_text_calls(content, NAMES)
    assert found.calls == ()
    assert found.content == "好的。\n\n請確認"


def test_several_calls_are_all_read() -> None:
    content = (
        '```json\n[{"name": "memory_save", "arguments": {"text": "A 是 1"}},'
        ' {"name": "memory_search", "arguments": {"query": "B"}}]\n```\n'
        '<tool_call>{"name": "memory_confirm", "arguments": {"proposal_id": "p-1"}}</tool_call>'
    )
    found = extract_text_calls(content, NAMES)
    assert [c.name for c in found.calls] == ["memory_save", "memory_search", "memory_confirm"]
    assert found.content == ""


def test_a_real_call_wins_over_the_written_one_but_the_text_is_cut() -> None:
    resp = LLMResponse(
        content='```json\n{"name": "memory_save", "arguments": {"text": "other"}}\n```',
        tool_calls=(SAVE,),
    )
    out = with_text_calls(resp, NAMES)
    assert out.tool_calls == (SAVE,) and out.content == ""
    plain = LLMResponse("你好")
    assert with_text_calls(plain, NAMES) is plain


def test_argument_aliases_map_to_the_schema_names() -> None:
    props = SCHEMAS["memory_save"]["function"]["parameters"]["properties"]
    assert normalise_arguments("memory_save", {"content": "我對花生過敏"}, props) == {
        "text": "我對花生過敏"
    }
    for alias in ("memory", "note", "fact", "information"):
        assert normalise_arguments("memory_save", {alias: "x"}, props) == {"text": "x"}
    # The real name wins over an alias; unknown names are left for the check to refuse.
    assert normalise_arguments("memory_save", {"content": "a", "text": "b"}, props) == {
        "text": "b"
    }
    assert normalise_arguments("memory_save", '{"fact": "a", "tags": [1]}', props) == {
        "text": "a",
        "tags": [1],
    }
    assert normalise_arguments("memory_search", {"q": "tea", "top_k": 3}, {"query", "limit"}) == {
        "query": "tea",
        "limit": 3,
    }
    # An alias that is a real property of the schema is never renamed.
    assert normalise_arguments("memory_save", {"content": "a"}, {"text", "content"}) == {
        "content": "a"
    }


async def test_a_tool_box_accepts_aliased_arguments_and_refuses_unknown_ones() -> None:
    got: list[dict[str, Any]] = []

    async def save(args: dict[str, Any]) -> Mapping[str, Any]:
        got.append(args)
        return {"status": "pending_confirmation"}

    box = ToolBox({"memory_save": save})
    assert await box.call(ToolCall("memory_save", {"memory": "我對花生過敏"})) == {
        "status": "pending_confirmation"
    }
    assert got == [{"text": "我對花生過敏"}]
    bad = await box.call(ToolCall("memory_save", {"content": "x 很好", "evil": 1}))
    assert "unknown argument 'evil'" in bad["error"] and len(got) == 1


async def test_the_tool_loop_runs_a_call_the_model_wrote_as_text(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_chat(
        as_json_text(tool_reply("memory_search", "讓我查一下。", query="咖啡")), "你喜歡咖啡。"
    )
    calls: list[dict[str, Any]] = []

    async def search(args: dict[str, Any]) -> Mapping[str, Any]:
        calls.append(args)
        return {"results": [{"id": "m-1", "text": "我喜歡咖啡"}]}

    resp = await run_tool_loop(
        OllamaChat(fake_ollama.url),
        [{"role": "user", "content": "我喜歡喝什麼？"}],
        ToolBox({"memory_search": search}),
    )
    assert resp.content == "你喜歡咖啡。" and calls == [{"query": "咖啡"}]
    second = fake_ollama.chat_requests[1]["messages"]
    assert second[-2]["content"] == "讓我查一下。"  # the model sees its words without the JSON
    assert second[-2]["tool_calls"][0]["function"]["name"] == "memory_search"
    assert json.loads(second[-1]["content"])["results"][0]["id"] == "m-1"


async def test_the_last_round_cuts_a_written_call_without_running_it(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.chat_handler = lambda body: as_json_text(
        tool_reply("memory_search", "再查一次", query="again")
    )
    calls: list[dict[str, Any]] = []

    async def search(args: dict[str, Any]) -> Mapping[str, Any]:
        calls.append(args)
        return {"results": []}

    box = ToolBox({"memory_search": search})
    resp = await run_tool_loop(
        OllamaChat(fake_ollama.url), [{"role": "user", "content": "?"}], box, max_rounds=2
    )
    assert len(box.records) == 2  # the third answer (no tools offered) was not run
    assert calls == [{"query": "again"}]  # and the same call ran once in the turn
    assert resp.content == "再查一次"  # and the JSON is cut from what the user would see


def test_the_fake_speaks_each_broken_mode_through_the_real_client(
    fake_ollama: FakeOllama,
) -> None:
    client = ollama.Client(host=fake_ollama.url)
    ask: list[Any] = [{"role": "user", "content": "記住：我對花生過敏"}]
    scripted = tool_reply("memory_save", text="我對花生過敏")

    fake_ollama.tool_mode = NO_TOOL_CALL
    fake_ollama.queue_chat(scripted)
    msg = client.chat(model="m", messages=ask).message
    assert not msg.tool_calls and msg.content == SMALL_MODEL_CLAIM

    fake_ollama.tool_mode = JSON_TEXT
    fake_ollama.queue_chat(scripted)
    msg = client.chat(model="m", messages=ask).message
    assert not msg.tool_calls and (msg.content or "").startswith("```json\n")
    assert json.loads((msg.content or "").strip("`").removeprefix("json\n")) == {
        "name": "memory_save",
        "arguments": {"text": "我對花生過敏"},
    }

    fake_ollama.tool_mode = WRONG_NAMES
    fake_ollama.queue_chat(scripted, "plain text passes untouched")
    [call] = client.chat(model="m", messages=ask).message.tool_calls or []
    assert call.function.name == "memory_save"
    assert dict(call.function.arguments) == {"content": "我對花生過敏"}
    assert client.chat(model="m", messages=ask).message.content == "plain text passes untouched"
