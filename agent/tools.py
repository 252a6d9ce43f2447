"""The tools the model may call, and the bounded tool loop.

The tools (docs/architecture.md, "Tools"): ``memory_save`` (a pending proposal, never a direct
write), ``memory_search`` and ``memory_archaeology``; ``reminder_create`` (a reminder proposal,
scheduled only once the user confirms it). ``memory_confirm`` is deliberately not a
tool: confirming is the user's act (a button, a reply, /confirm), so a model that calls it is
told so. The pipeline binds each name to a handler for the current user; this module owns the
JSON schemas, the argument checks and the loop. An unknown tool, malformed arguments or a
failing handler is answered to the model as ``{"error": ...}`` so it can recover; nothing here
raises for them. A call runs once per turn: asked again with the same arguments (a retry, the
model repeating itself), it gets the first result (:mod:`agent.turn.calls`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.errors import LLMContextError, ToolArgumentError
from agent.framing import neutralise_value
from agent.llm import ChatMessage, LLMClient, LLMResponse, ToolCall
from agent.streaming import StreamGuard
from agent.textcalls import normalise_arguments, with_text_calls
from agent.turn.calls import DoneCall, TurnCalls, canonical

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 4
# What a handler gets (checked arguments) and gives back (a JSON-able result).
ToolHandler = Callable[[dict[str, Any]], Awaitable[Mapping[str, Any]]]
# A turn's conversation so far cut to fit a server that refused it (None: nothing can go).
Shrink = Callable[[list[dict[str, Any]]], list[dict[str, Any]] | None]


def _fn(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }


SCHEMAS: dict[str, dict[str, Any]] = {
    "memory_save": _fn(
        "memory_save",
        "Propose a long-term memory about the user. It is NOT saved until the user confirms; "
        "tell the user it awaits confirmation.",
        {
            "text": {"type": "string", "description": "The fact, in the user's language."},
            "section": {"type": "string", "description": "MEMORY.md section, e.g. 偏好."},
            "topic": {"type": "string", "description": "canonical topic, e.g. food:coffee"},
            "scope": {
                "type": "string",
                "description": "global (default), project:<name> or lang:<name> when the fact "
                "holds only there",
            },
            "weight": {
                "type": "integer",
                "description": "importance 1-8 (default 5); higher when the user stresses it",
            },
        },
        ["text"],
    ),
    "memory_search": _fn(
        "memory_search",
        "Search the user's stored memories, daily logs and summaries.",
        {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "description": "At most this many results (1-10)."},
        },
        ["query"],
    ),
    "memory_archaeology": _fn(
        "memory_archaeology",
        "Show how a memory changed over time: its supersedes chain and history.",
        {
            "memory_id": {"type": "string", "description": "A memory id (m-...)."},
            "topic": {"type": "string", "description": "Or a canonical topic."},
        },
        [],
    ),
    "reminder_create": _fn(
        "reminder_create",
        "Propose a reminder. It is NOT set until the user confirms it; tell the user it awaits "
        "confirmation.",
        {
            "when": {
                "type": "string",
                "description": "ISO 8601 date and time in the user's time zone, "
                "e.g. 2026-03-05T09:00:00.",
            },
            "text": {"type": "string", "description": "What to remind of, in the user's words."},
            "recurrence": {
                "type": "string",
                "description": "Only if it repeats: daily, weekly, monthly or yearly.",
            },
        },
        ["when", "text"],
    ),
}

# Names a model may still call (it may expect them) that are not its to call.
NOT_TOOLS: dict[str, str] = {
    "memory_confirm": (
        "Only the user can confirm, replace or discard a memory (their own answer to the "
        "proposal, or /confirm). Tell them it awaits their confirmation; "
        "nothing was saved."
    ),
}

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def check_arguments(schema: Mapping[str, Any], raw: Any) -> dict[str, Any]:
    """Parse (a dict or JSON text) and check ``raw`` against ``schema``'s parameters."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolArgumentError(f"arguments are not valid JSON: {exc.msg}") from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ToolArgumentError("arguments must be a JSON object")
    params = schema["function"]["parameters"]
    props: Mapping[str, Any] = params.get("properties", {})
    args = dict(raw)
    for name in params.get("required", []):
        value = args.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ToolArgumentError(f"missing required argument {name!r}")
    for name, value in args.items():
        if name not in props:
            raise ToolArgumentError(f"unknown argument {name!r}")
        kinds = _TYPES.get(props[name].get("type", ""), (object,))
        if isinstance(value, bool) and bool not in kinds:
            raise ToolArgumentError(f"argument {name!r} must be {props[name]['type']}")
        if not isinstance(value, kinds):
            # Small models often send numbers as strings; accept what converts cleanly.
            if kinds == (int,) and isinstance(value, str) and value.strip().isdigit():
                args[name] = int(value)
                continue
            raise ToolArgumentError(f"argument {name!r} must be {props[name]['type']}")
    return args


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One tool call the model made (for logs, tests and /why); ``reused``: answered from
    the turn's record, the handler not run again."""

    name: str
    arguments: Any
    result: Mapping[str, Any]
    reused: bool = False


class ToolBox:
    """The tools offered for one message, bound to that user's handlers.

    ``calls`` is the turn's record of the calls that ran (one box per turn owns one): a call
    with the same tool and arguments is answered from it, never run twice.
    """

    def __init__(
        self, handlers: Mapping[str, ToolHandler], calls: TurnCalls | None = None
    ) -> None:
        self.handlers = dict(handlers)
        self.records: list[ToolRecord] = []
        self.calls = TurnCalls() if calls is None else calls

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """The JSON schemas of the offered tools."""
        return [SCHEMAS[name] for name in self.handlers if name in SCHEMAS]

    async def call(self, call: ToolCall) -> Mapping[str, Any]:
        """Run one tool call; every failure becomes ``{"error": ...}`` for the model."""
        handler = self.handlers.get(call.name)
        schema = SCHEMAS.get(call.name)
        if call.name in NOT_TOOLS:
            result: Mapping[str, Any] = {"error": NOT_TOOLS[call.name]}
        elif handler is None or schema is None:
            known = ", ".join(self.handlers) or "none"
            result = {"error": f"unknown tool {call.name!r}; tools: {known}"}
        else:
            props = schema["function"]["parameters"].get("properties", {})
            # Small models name arguments their own way (content for text): map the usual ones.
            raw = normalise_arguments(call.name, call.arguments, props)
            try:
                args = check_arguments(schema, raw)
            except ToolArgumentError as exc:
                result = {"error": f"bad arguments for {call.name}: {exc}"}
            else:
                key = canonical(call.name, args)
                done = self.calls.get(key)
                if done is not None:  # it ran in this turn: its effects happened once
                    log.info("tool %s asked again in the same turn: not run again", call.name)
                    result = _answer(call.name, done)
                    self.records.append(ToolRecord(call.name, call.arguments, result, True))
                    return result
                done = await _run(handler, call.name, args)
                self.calls.put(key, done)
                result = _answer(call.name, done)
        self.records.append(ToolRecord(call.name, call.arguments, result))
        return result


async def _run(handler: ToolHandler, name: str, args: dict[str, Any]) -> DoneCall:
    """Run one handler; a failure is recorded too (it may have done part of its work)."""
    try:
        return DoneCall(await handler(args))
    except ToolArgumentError as exc:  # a handler's own check of its arguments
        return DoneCall({"error": f"bad arguments for {name}: {exc}"})
    except Exception as exc:  # a tool failure must not end the conversation
        log.warning("tool %s failed", name, exc_info=True)
        return DoneCall(None, exc)


def _answer(name: str, done: DoneCall) -> Mapping[str, Any]:
    """What the model is told of a call that ran."""
    if done.result is not None:
        return done.result
    return {"error": f"{name} failed: {done.error}"}


def tool_message(name: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """The ``tool`` role message that carries a result back to the model."""
    return {
        "role": "tool",
        "tool_name": name,
        "content": json.dumps(neutralise_value(result), ensure_ascii=False, default=str),
    }


async def run_tool_loop(
    llm: LLMClient,
    messages: Sequence[ChatMessage],
    tools: ToolBox,
    max_rounds: int = MAX_TOOL_ROUNDS,
    stream: StreamGuard | None = None,
    shrink: Shrink | None = None,
) -> LLMResponse:
    """Chat until the model answers without tool calls, with at most ``max_rounds`` rounds.

    After ``max_rounds`` rounds of tool calls the model is asked once more with no tools
    offered, so it must answer in text; tool calls it still makes then are not run. Calls the
    model writes into its text (:mod:`agent.textcalls`) count as calls and are cut from it.
    With ``stream`` the reply is shown as it is written (:mod:`agent.streaming`); a round
    that ends in tool calls takes its text back. A round the server refuses as too long for
    its context is asked once more with the conversation so far cut by ``shrink`` (once per
    turn; None: not asked again): the turn goes on from there, the calls it ran stay run.
    """
    convo = [dict(m) for m in messages]
    known = {*tools.handlers, *NOT_TOOLS}

    def shown() -> Iterator[str]:
        """What the model was shown: a call written there is a quote, never run."""
        return (str(m.get("content") or "") for m in convo)

    on_text = stream.piece if stream is not None else None
    for round_no in range(max_rounds + 1):
        offered = tools.schemas if round_no < max_rounds else []
        try:
            answer = await llm.chat(convo, offered, on_text=on_text)
        except LLMContextError:
            smaller = shrink(convo) if shrink is not None else None
            if smaller is None:
                raise
            shrink, convo[:] = None, smaller
            if stream is not None:  # a server that cut rather than refused may have streamed
                await stream.tool_round()
            answer = await llm.chat(convo, offered, on_text=on_text)
        # A call written as text (small models) is run like a real one and never shown raw.
        resp = with_text_calls(answer, known, shown)
        if not resp.tool_calls or round_no >= max_rounds:
            return resp
        if stream is not None:
            await stream.tool_round()
        convo.append(resp.as_message())
        for call in resp.tool_calls:
            convo.append(tool_message(call.name, await tools.call(call)))
    raise AssertionError("unreachable")  # the loop always returns on its last round
