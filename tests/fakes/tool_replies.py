"""How small local models break tool calling, as edits of a scripted chat reply.

Small models break tool calling in three ways (mem0 #1971, #2386; Graphiti #868): no call at
all, the call written as JSON text, or the call made with renamed arguments. Used by the fake
model servers (``tests/fakes/ollama_server.py``) through ``tool_mode``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

ChatReply = str | dict[str, Any]


def tool_reply(name: str, content: str = "", **arguments: Any) -> dict[str, Any]:
    """A chat reply asking for one tool call ``name(**arguments)``."""
    return {
        "content": content,
        "tool_calls": [{"function": {"name": name, "arguments": arguments}}],
    }


NATIVE, NO_TOOL_CALL, JSON_TEXT, WRONG_NAMES = "native", "no_tool_call", "json_text", "wrong_names"
SMALL_MODEL_CLAIM = "好的，我記住了！"
# What small models call the arguments (mem0 and Graphiti users report these).
WRONG_ARGUMENT_NAMES = {"text": "content", "query": "q", "memory_id": "id"}


def _as_dict(reply: ChatReply) -> dict[str, Any]:
    return {"content": reply} if isinstance(reply, str) else dict(reply)


def without_tool_calls(reply: ChatReply, claim: str = SMALL_MODEL_CLAIM) -> dict[str, Any]:
    """The reply a model gives when it never calls the tool: text only, often a false claim."""
    out = _as_dict(reply)
    if out.pop("tool_calls", None):
        out["content"] = out.get("content") or claim
    return out


def as_json_text(reply: ChatReply, style: str = "fence") -> dict[str, Any]:
    """The reply with its tool calls written into the content as JSON instead of made.

    ``style``: ``"fence"`` (a ```json block), ``"bare"`` (the object inline) or ``"tag"``
    (Qwen / Hermes ``<tool_call>`` tags).
    """
    out = _as_dict(reply)
    calls = out.pop("tool_calls", None) or []
    written = []
    for call in calls:
        fn = call.get("function", {})
        obj = {"name": fn.get("name"), "arguments": fn.get("arguments", {})}
        if style == "bare":
            written.append(json.dumps(obj, ensure_ascii=False))
        elif style == "tag":
            written.append(f"<tool_call>\n{json.dumps(obj, ensure_ascii=False)}\n</tool_call>")
        else:
            written.append(f"```json\n{json.dumps(obj, ensure_ascii=False, indent=2)}\n```")
    if written:
        out["content"] = "\n".join([*filter(None, [out.get("content", "")]), *written])
    return out


def with_wrong_names(reply: ChatReply, renames: dict[str, str] | None = None) -> dict[str, Any]:
    """The reply with each tool call's argument names changed (``text`` -> ``content``...)."""
    renames = WRONG_ARGUMENT_NAMES if renames is None else renames
    out = _as_dict(reply)
    calls = []
    for call in out.get("tool_calls") or []:
        fn = dict(call.get("function", {}))
        args = fn.get("arguments", {})
        fn["arguments"] = {renames.get(k, k): v for k, v in args.items()}
        calls.append({**call, "function": fn})
    if calls:
        out["tool_calls"] = calls
    return out


BROKEN_MODES: dict[str, Callable[[ChatReply], dict[str, Any]]] = {
    NO_TOOL_CALL: without_tool_calls,
    JSON_TEXT: as_json_text,
    WRONG_NAMES: with_wrong_names,
}
