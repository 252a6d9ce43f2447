"""Tool calls small local models write as text, and the argument names they get wrong.

Through Ollama, small models often break tool calling in one of three ways (mem0 #1971,
#2386; Graphiti #868): no call at all, the call written into the reply as JSON (often in a
```json block, or inside ``<tool_call>`` tags, or as ``memory_save(text="...")``), or a call
whose arguments have other names (``content`` for ``text``). This module turns the text form
back into :class:`~agent.llm.ToolCall` values and removes it from the reply, so the user
never sees it raw, and maps argument aliases to the schema's names. Only calls to names the
caller knows are taken: any other JSON in a reply (the user may have asked for JSON) stays.
And only the model's own words: a call the reply repeats from what the model was shown (a
stored memory, a log line, a tool result, the message) is a quote, and is never run.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.llm import LLMResponse, ToolCall

_FENCE = re.compile(r"```[ \t]*([A-Za-z_]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_TAG = re.compile(
    r"<(tool_call|function_call|tool_code|tools)>(.*?)(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE
)
# Llama 3.x's marker before a call it writes as text.
_SPECIAL = re.compile(r"<\|python_tag\|>|<\|eom_id\|>|<\|eot_id\|>")
_NAME_KEYS = ("name", "function", "tool", "tool_name", "action")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "action_input", "params")
_BLANK_LINES = re.compile(r"\n{3,}")

# Names small models use for an argument, per tool. An alias is used only when the schema
# does not have a property of that name itself and the call does not also give the real one.
ALIASES: dict[str, dict[str, str]] = {
    "memory_save": {
        "content": "text",
        "memory": "text",
        "note": "text",
        "fact": "text",
        "value": "text",
        "information": "text",
        "info": "text",
        "message": "text",
        "memory_text": "text",
        "memory_content": "text",
        "statement": "text",
        "canonical_topic": "topic",
    },
    "memory_search": {
        "q": "query",
        "text": "query",
        "search": "query",
        "search_query": "query",
        "keyword": "query",
        "keywords": "query",
        "term": "query",
        "top_k": "limit",
        "k": "limit",
        "max_results": "limit",
    },
    "memory_archaeology": {"id": "memory_id", "memory": "memory_id"},
}


@dataclass(frozen=True, slots=True)
class TextCalls:
    """A reply's text without its written tool calls, and the calls found in it."""

    content: str
    calls: tuple[ToolCall, ...] = ()


def _decode(body: str) -> Any:
    """The JSON value in ``body`` (whole, or the first object in it), or None."""
    body = _SPECIAL.sub("", body).strip()
    try:
        return json.loads(body)
    except ValueError:
        pass
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(body[start:])[0]
    except ValueError:
        return None


def _arguments(obj: Mapping[str, Any]) -> Any:
    for key in _ARG_KEYS:
        if key in obj:
            value = obj[key]
            if isinstance(value, str):
                decoded = _decode(value)
                return decoded if isinstance(decoded, dict) else value
            return value
    # {"name": "memory_save", "text": "..."}: the arguments sit beside the name.
    return {k: v for k, v in obj.items() if k not in _NAME_KEYS and k != "type"}


def calls_in(value: Any, names: Collection[str]) -> list[ToolCall]:
    """The calls to ``names`` that a decoded JSON value describes, in any usual shape."""
    if isinstance(value, list):
        return [c for item in value for c in calls_in(item, names)]
    if not isinstance(value, Mapping):
        return []
    if isinstance(value.get("tool_calls"), list):
        return calls_in(value["tool_calls"], names)
    if isinstance(value.get("function"), Mapping):  # {"type": "function", "function": {...}}
        return calls_in(value["function"], names)
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if name is None or name not in names:
        return []
    return [ToolCall(name=name, arguments=_arguments(value))]


def _python_call(body: str, names: Collection[str]) -> ToolCall | None:
    """``memory_save(text="...")`` written as code, with literal keyword arguments only."""
    line = _SPECIAL.sub("", body).strip().rstrip(";")
    if "(" not in line or len(line) > 4000:
        return None
    try:
        node = ast.parse(line, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call) or node.args:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "call":  # memory_save.call(...)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in names:
        return None
    try:
        args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    except (ValueError, SyntaxError):
        return None
    return ToolCall(name=func.id, arguments=args)


def _mentions_call(body: str, names: Collection[str]) -> bool:
    """Whether an unreadable block still looks like a call to one of ``names``."""
    return any(re.search(rf"[\"']{re.escape(n)}[\"']|\b{re.escape(n)}\s*\(", body) for n in names)


def _block_calls(body: str, names: Collection[str]) -> list[ToolCall] | None:
    """The calls in a fenced or tagged block; None when the block is not a tool call."""
    calls = calls_in(_decode(body), names)
    if not calls:
        calls = [c for ln in body.splitlines() if (c := _python_call(ln, names))]
    if calls:
        return calls
    return [] if _mentions_call(body, names) else None


def extract_text_calls(content: str, names: Collection[str]) -> TextCalls:
    """Find the tool calls to ``names`` written in ``content`` and cut them out of it.

    Fenced blocks, ``<tool_call>``-style tags, bare JSON objects and lines that are a call
    written as code are read; a block that names a tool but cannot be read is cut too (it
    must not reach the user), without a call.
    """
    if not names or not content:
        return TextCalls(content)
    found_at: list[tuple[int, ToolCall]] = []  # the calls by where they were written
    spans: list[tuple[int, int]] = []

    def cut(pattern: re.Pattern[str], group: int) -> None:
        for m in pattern.finditer(content):
            if any(a <= m.start() < b for a, b in spans):
                continue
            found = _block_calls(m.group(group), names)
            if found is not None:
                found_at.extend((m.start(), c) for c in found)
                spans.append(m.span())

    cut(_TAG, 2)
    cut(_FENCE, 2)
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[{\[]", content):  # bare JSON outside the blocks
        start = m.start()
        if any(a <= start < b for a, b in spans):
            continue
        try:
            value, end = decoder.raw_decode(content, start)
        except ValueError:
            continue
        found = calls_in(value, names)
        if found:
            found_at.extend((start, c) for c in found)
            spans.append((start, end))
    for m in re.finditer(r"^[^\n]*$", content, re.MULTILINE):  # calls written as code
        if not any(a <= m.start() < b for a, b in spans) and (c := _python_call(m[0], names)):
            found_at.append((m.start(), c))
            spans.append(m.span())
    if not spans:
        return TextCalls(_SPECIAL.sub("", content) if _SPECIAL.search(content) else content)
    kept, pos = [], 0
    for a, b in sorted(spans):
        kept.append(content[pos:a].rstrip(" \t"))  # "好的 {...} 已送出": one space stays
        pos = max(pos, b)
    kept.append(content[pos:])
    text = _BLANK_LINES.sub("\n\n", _SPECIAL.sub("", "".join(kept))).strip()
    return TextCalls(text, tuple(c for _, c in sorted(found_at, key=lambda pc: pc[0])))


def call_key(call: ToolCall) -> str:
    """A call as a comparable string: its name and its arguments, however they were written."""
    args = call.arguments
    if isinstance(args, str):
        decoded = _decode(args)
        args = decoded if decoded is not None else args
    return json.dumps([call.name, args], sort_keys=True, ensure_ascii=False, default=str)


def quoted_calls(texts: Iterable[str], names: Collection[str]) -> frozenset[str]:
    """The calls written in ``texts`` (what the model was shown), as :func:`call_key` keys."""
    return frozenset(call_key(c) for t in texts for c in extract_text_calls(t, names).calls)


def with_text_calls(
    resp: LLMResponse, names: Collection[str], shown: Callable[[], Iterable[str]] | None = None
) -> LLMResponse:
    """``resp`` with written tool calls taken as calls (if it made none) and cut from its text.

    ``shown`` gives the texts the model was shown (memories, history, tool results, the
    message): a call written there is a quote, not the model's own words, and is not taken,
    so a stored ``{"name": "reminder_create", ...}`` the reply repeats never runs.
    """
    found = extract_text_calls(resp.content, names)
    if found.content == resp.content and not found.calls:
        return resp
    calls = found.calls
    if calls and shown is not None:
        quoted = quoted_calls(shown(), names)
        calls = tuple(c for c in calls if call_key(c) not in quoted)
    return LLMResponse(content=found.content, tool_calls=resp.tool_calls or calls)


def normalise_arguments(name: str, raw: Any, properties: Collection[str]) -> Any:
    """``raw`` with the argument names small models use mapped to the schema's ``properties``."""
    if isinstance(raw, str):
        decoded = _decode(raw) if raw.strip() else {}
        if not isinstance(decoded, dict):
            return raw  # the argument check says what is wrong with it
        raw = decoded
    aliases = ALIASES.get(name, {})
    if not isinstance(raw, Mapping) or not aliases:
        return raw
    out: dict[str, Any] = {}
    for key, value in raw.items():
        target = aliases.get(key)
        if key in properties or target is None or target not in properties:
            out.setdefault(key, value)
        elif target not in raw and target not in out:
            out[target] = value
    return out
