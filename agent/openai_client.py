"""The OpenAI-compatible chat backend (the only module that imports ``openai``).

``/v1/chat/completions`` as llama.cpp's ``llama-server``, vLLM, LM Studio, SGLang and hosted
endpoints speak it: streamed, with tools. The agent's messages are in Ollama's wire shape
(:data:`agent.llm.ChatMessage`); they are converted here (tool calls get ids, their
arguments become JSON text, tool results name the call they answer).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import weakref
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, cast

import httpx
import openai

from agent.llm import (
    ChatMessage,
    ExceptionTable,
    LLMContextError,
    LLMError,
    LLMResponse,
    LLMResponseError,
    LLMUnavailableError,
    ModelFacts,
    TextSink,
    ToolCall,
    Usage,
    Wording,
    map_exceptions,
    with_retries,
)

log = logging.getLogger(__name__)


def _reconnectable(cause: BaseException | None) -> bool:
    """A connection that failed (the server may be restarting); not one that timed out."""
    return isinstance(cause, openai.APIConnectionError) and not isinstance(
        cause, openai.APITimeoutError
    )


SERVER_DOWN = "the model server is not reachable at {url}: is it running?"
# How llama.cpp ("exceeds the available context size"), vLLM ("maximum context length is")
# and OpenAI ("context_length_exceeded") refuse a prompt that does not fit.
_TOO_LONG = re.compile(
    r"context (size|length|window)|context_length_exceeded|exceed_context|too long", re.I
)


# The one table of what the openai SDK's (and httpx's) errors mean; each call words them.
_ERRORS: ExceptionTable = (
    (openai.APITimeoutError, "timeout"),  # before its base class, APIConnectionError
    (openai.APIConnectionError, "down"),
    (openai.APIStatusError, "status"),
    ((httpx.HTTPError, openai.APIError), "failed"),  # a stream cut or garbled
    ((ValueError, AttributeError), "malformed"),
    ((TypeError, KeyError, IndexError), "garbled"),  # a body of the wrong schema
)


def wire_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The agent's messages in OpenAI's shape: call ids, JSON arguments, tool_call_id, and
    consecutive system messages joined into one."""
    out: list[dict[str, Any]] = []
    waiting: list[str] = []  # ids of the last assistant calls not answered yet, in order
    for n, m in enumerate(messages):
        role = str(m.get("role", "user"))
        content = m.get("content") or ""
        if role == "assistant" and m.get("tool_calls"):
            calls, ids = [], []
            for i, call in enumerate(m["tool_calls"]):
                fn = call.get("function", {})
                args = fn.get("arguments", {})
                text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
                call_id = str(call.get("id") or f"call_{n}_{i}")
                ids.append(call_id)
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": fn.get("name", ""), "arguments": text},
                    }
                )
            waiting = ids
            out.append({"role": "assistant", "content": content, "tool_calls": calls})
        elif role == "tool":
            call_id = waiting.pop(0) if waiting else f"call_{n}"
            out.append({"role": "tool", "tool_call_id": call_id, "content": content})
        elif role == "system" and out and out[-1]["role"] == "system":
            # Several servers' templates (Mistral's, Llama's) take one system message only:
            # the memory block joins the system text, after it (the prefix stays the same).
            out[-1]["content"] = f"{out[-1]['content']}\n\n{content}"
        else:
            out.append({"role": role, "content": content})
    return out


class OpenAIChat:
    """The chat model behind :class:`agent.llm.LLMClient`, through ``openai.AsyncOpenAI``.

    ``max_tokens`` is the room the prompt leaves for the reply. A connection error is retried
    ``retries`` times unless text already reached ``on_text``; a timeout is not.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        timeout: float = 120.0,
        retries: int = 2,
        backoff_seconds: float = 0.5,
        reply_tokens: int = 1024,
        context_tokens: int = 0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._model = model
        self._key = api_key or "none"  # local servers want none; the client wants one
        self._timeout = timeout
        self._retries = max(0, retries)
        self._backoff = backoff_seconds
        self.reply_tokens = reply_tokens
        self.context_tokens = context_tokens
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def model(self) -> str:
        """The chat model's name."""
        return self._model

    def _client(self) -> Any:
        """One client per event loop (an httpx pool belongs to the loop that made it)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                base_url=self.base_url, api_key=self._key, timeout=self._timeout, max_retries=0
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the client of the running loop (on shutdown)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        on_text: TextSink | None = None,
    ) -> LLMResponse:
        """One streamed /v1/chat/completions call; raises :class:`LLMError` subclasses only."""
        return await with_retries(
            partial(self._chat_once, messages, tools),
            on_text,
            _reconnectable,
            retries=self._retries,
            backoff=self._backoff,
        )

    async def _chat_once(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]],
        sink: TextSink,
    ) -> LLMResponse:
        extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
        start = time.monotonic()
        malformed = lambda exc: LLMResponseError(  # noqa: E731
            f"the model server answered with a malformed body: {exc}"
        )
        said: Wording = {
            "timeout": lambda _: LLMUnavailableError(
                f"the model server at {self.base_url} did not answer within {self._timeout:g} s"
            ),
            "down": lambda _: LLMUnavailableError(SERVER_DOWN.format(url=self.base_url)),
            "status": self._refused,
            "failed": lambda exc: LLMUnavailableError(
                f"the model server at {self.base_url} failed: {exc}"
            ),
            "malformed": malformed,
            "garbled": malformed,
        }
        with map_exceptions(_ERRORS, said):
            stream = await self._client().chat.completions.create(
                model=self._model,
                messages=wire_messages(messages),
                stream=True,
                stream_options={"include_usage": True},
                max_tokens=self.reply_tokens,
                **extra,
            )
            return await _collect(stream, sink, start, self._model)

    def _refused(self, error: Exception) -> LLMError:
        """An HTTP error status: a prompt too long, the server failing, or a refusal."""
        exc = cast("openai.APIStatusError", error)  # the table's "status" row
        detail = _error_text(exc)
        if exc.status_code == 400 and _TOO_LONG.search(detail):
            return LLMContextError(f"the server refused the prompt: {detail}")
        if exc.status_code >= 500:
            return LLMUnavailableError(
                f"the model server at {self.base_url} failed ({exc.status_code}): {detail}"
            )
        return LLMResponseError(
            f"the model server refused the chat with {self._model} ({exc.status_code}): {detail}"
        )


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            return str(inner.get("message") or inner)
        return str(inner)
    return str(exc.message)


async def _collect(stream: Any, sink: TextSink, start: float, model: str) -> LLMResponse:
    """Join the streamed chunks (text to ``sink`` as it comes, call pieces by index)."""
    pieces: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    first: float | None = None
    usage: Any = None
    timings: Any = None
    async for chunk in stream:
        usage = chunk.usage or usage
        timings = getattr(chunk, "timings", None) or timings  # llama.cpp's own counts
        for choice in chunk.choices or ():
            delta = choice.delta
            if delta is None:
                continue
            if delta.content:
                first = first if first is not None else time.monotonic()
                pieces.append(delta.content)
                await sink(delta.content)
            for part in delta.tool_calls or ():
                first = first if first is not None else time.monotonic()
                held = calls.setdefault(part.index, {"name": "", "arguments": ""})
                if part.function is not None:
                    held["name"] += part.function.name or ""
                    held["arguments"] += part.function.arguments or ""
    found = tuple(
        ToolCall(name=c["name"], arguments=_arguments(c["arguments"]))
        for _, c in sorted(calls.items())
        if c["name"]
    )
    content = "".join(pieces)
    if not content.strip() and not found:
        raise LLMResponseError("the model server answered with an empty message")
    counted = _usage(usage, timings, first, start)
    log.info("openai %s: %s", model, counted.line())
    return LLMResponse(content=content, tool_calls=found, usage=counted)


def _arguments(text: str) -> Any:
    """A call's arguments as a dict when they are JSON, else the raw text (the tools say so)."""
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def _usage(usage: Any, timings: Any, first: float | None, start: float) -> Usage:
    prompt = getattr(usage, "prompt_tokens", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    if cached is None and isinstance(timings, Mapping):
        cached = timings.get("cache_n")
    return Usage(
        prompt_tokens=prompt,
        cached_tokens=cached,
        reply_tokens=getattr(usage, "completion_tokens", None),
        first_token_ms=None if first is None else (first - start) * 1000,
    )


def _root(base_url: str) -> str:
    """The server's root (llama.cpp's /props lives beside /v1, not under it)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def server_facts(base_url: str, model: str, api_key: str = "", timeout: float = 5.0) -> ModelFacts:
    """What the server says: its models (``/v1/models``), context (llama.cpp's ``/props``,
    vLLM's ``max_model_len``) and whether its template calls tools
    (``/props``); raises :class:`LLMError` when it cannot say."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/")
    wording: Wording = {
        "failed": lambda _: LLMUnavailableError(SERVER_DOWN.format(url=url)),
        "malformed": lambda _: LLMResponseError(
            f"the server at {url} answered /models with a malformed body"
        ),
    }
    with map_exceptions(_ERRORS, wording), httpx.Client(timeout=timeout, headers=headers) as http:
        listed = http.get(f"{url}/models")
        if listed.status_code != 200:
            raise LLMResponseError(f"{url}/models answered HTTP {listed.status_code}")
        rows = listed.json().get("data") or []
        ids = [str(r.get("id", "")) for r in rows]
        mine = [r for r in rows if r.get("id") == model]
        # llama.cpp serves one model whatever name is asked for.
        if not mine and len(rows) != 1:
            raise LLMResponseError(
                f"the server at {url} has no model {model} (it has: {', '.join(ids)})"
            )
        row = (mine or rows)[0]
        context, tools = row.get("max_model_len"), None
        props = http.get(f"{_root(base_url)}/props")
        if props.status_code == 200:
            said = props.json()
            settings = said.get("default_generation_settings") or {}
            context = settings.get("n_ctx") or context
            # llama.cpp says whether its chat template can call tools (--jinja and a
            # template that takes them); other servers do not say.
            caps = said.get("chat_template_caps") or {}
            tools = caps.get("supports_tools") if isinstance(caps, dict) else None
    return ModelFacts(
        name=str(row.get("id", model)),
        context_tokens=int(context) if context else None,
        tools=tools if isinstance(tools, bool) else None,
    )
