"""Everything that talks to Ollama (the only module that imports ``ollama``)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, cast

import httpx
import numpy as np
import numpy.typing as npt
import ollama

from agent.llm import (
    ChatMessage,
    ExceptionTable,
    LLMContextError,
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
from memory.errors import EmbedderUnavailableError
from memory.index.embedders import Vector, normalise, query_part

log = logging.getLogger(__name__)
OLLAMA_DOWN = "Ollama is not reachable at {host}: start it with `ollama serve`"

# The one table of what the ollama SDK's (and httpx's) errors mean; each call words them.
_ERRORS: ExceptionTable = (
    ((ConnectionError, httpx.ConnectError), "down"),  # ConnectionError when not streaming
    (httpx.TimeoutException, "timeout"),
    (httpx.HTTPError, "failed"),  # connection dropped mid-answer, protocol errors
    (ollama.ResponseError, "refused"),
    (ValueError, "malformed"),  # not JSON, or JSON of the wrong shape (pydantic)
    ((TypeError, KeyError, AttributeError), "garbled"),  # a body of the wrong schema
)


def _down(host: str) -> Wording:
    """Every transport failure is "Ollama is not reachable" (the doctor's and the lists')."""
    down = lambda _: LLMUnavailableError(OLLAMA_DOWN.format(host=host))  # noqa: E731
    return {"down": down, "timeout": down, "failed": down}


def _refused(exc: Exception) -> str:
    """The reason an ``ollama.ResponseError`` (the table's "refused" row) gives."""
    return str(cast("ollama.ResponseError", exc).error)


class OllamaEmbedder:
    """Embeddings from Ollama's /api/embed (``mxbai-embed-large`` by default, 1024 dims)."""

    KNOWN_DIMS: ClassVar[dict[str, int]] = {
        "mxbai-embed-large": 1024,
        "bge-m3": 1024,
        "nomic-embed-text": 768,
    }

    def __init__(
        self,
        host: str,
        model: str = "mxbai-embed-large",
        *,
        dim: int | None = None,
        batch_size: int = 32,
        timeout: float = 60.0,
    ) -> None:
        self.host = host
        self._model = model
        self._client = ollama.Client(host=host, timeout=timeout)
        self._batch = batch_size
        self._dim = dim or self.KNOWN_DIMS.get(model.split(":")[0], 0)

    @property
    def name(self) -> str:
        """``ollama/<model>``, recorded in the index."""
        return f"ollama/{self._model}"

    @property
    def dim(self) -> int:
        """The model's dimension (asked of Ollama once when not known)."""
        if not self._dim:
            self._dim = int(self._embed(["dimension probe"]).shape[1])
        return self._dim

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        down = lambda _: EmbedderUnavailableError(OLLAMA_DOWN.format(host=self.host))  # noqa: E731
        said: Wording = {
            "down": down,
            "timeout": down,
            "failed": down,
            "refused": lambda exc: EmbedderUnavailableError(
                f"Ollama could not embed with {self._model}: {_refused(exc)} "
                f"(try `ollama pull {self._model}`)"
            ),
            "malformed": lambda _: EmbedderUnavailableError(
                "Ollama answered /api/embed with a malformed body"
            ),
        }
        with map_exceptions(_ERRORS, said):
            resp = self._client.embed(model=self._model, input=list(texts))
        rows = np.asarray(resp.embeddings, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise EmbedderUnavailableError("Ollama answered /api/embed with a malformed body")
        return normalise(rows)

    def embed_query(self, text: str) -> Vector:
        """Embed a search query (its :func:`query_part`: a long message costs a short one's)."""
        return self._embed([query_part(text)])[0]

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed several queries in one request (a memory's text and its Simplified fold)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed([query_part(t) for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed documents in batches."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        step = self._batch
        parts = [self._embed(texts[i : i + step]) for i in range(0, len(texts), step)]
        return np.vstack(parts)


class OllamaChat:
    """The chat model behind :class:`agent.llm.LLMClient`, through ``ollama.AsyncClient``.

    Every call streams (``stream=True``) and sends the same ``num_ctx`` (a change reloads
    the model) and ``keep_alive`` (else Ollama unloads the model after five quiet minutes).
    A connection error is retried ``retries`` times with exponential backoff (Ollama may be
    restarting) unless text already reached ``on_text``; a timeout is not retried, since the
    user has already waited ``timeout`` seconds.
    """

    def __init__(
        self,
        host: str,
        model: str = "qwen2.5:7b",
        *,
        timeout: float = 120.0,
        retries: int = 2,
        backoff_seconds: float = 0.5,
        options: Mapping[str, Any] | None = None,
        context_tokens: int = 0,
        keep_alive: str = "",
        count: Callable[[str], int] | None = None,
    ) -> None:
        self.host = host
        self._model = model
        self._timeout = timeout
        self._retries = max(0, retries)
        self._backoff = backoff_seconds
        self._options = dict(options or {})
        if context_tokens > 0:
            self._options["num_ctx"] = context_tokens
        self._keep_alive = _keep_alive(keep_alive)
        # Our own estimate of a prompt's tokens: Ollama cuts a prompt longer than num_ctx
        # and answers 200, so only its prompt_eval_count below what was sent shows the cut.
        self._count = count
        # httpx connection pools belong to one event loop (the bot and the terminal chat may
        # run different loops), so one client per loop; building one per call cost ~10 ms.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[str, Any]] = (
            weakref.WeakKeyDictionary()
        )

    async def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        held = self._clients.get(loop)
        if held is not None and held[0] == self.host:
            return held[1]
        if held is not None:  # the host setting changed: drop the old pool
            await held[1].close()
        # A reply with U+0085 or U+2028 in it must not be cut mid-line (LineSafeTransport).
        client = ollama.AsyncClient(
            host=self.host, timeout=self._timeout, transport=LineSafeTransport()
        )
        self._clients[loop] = (self.host, client)
        return client

    async def aclose(self) -> None:
        """Close the client of the running loop (on shutdown)."""
        held = self._clients.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[1].close()

    @property
    def model(self) -> str:
        """The chat model's name."""
        return self._model

    @property
    def context_tokens(self) -> int:
        """The ``num_ctx`` sent on every call (0: Ollama's own default)."""
        return int(self._options.get("num_ctx", 0))

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        on_text: TextSink | None = None,
    ) -> LLMResponse:
        """One streamed /api/chat call; raises :class:`LLMError` subclasses only."""
        resp = await with_retries(
            partial(self._chat_once, messages, tools),
            on_text,
            lambda cause: isinstance(cause, ConnectionError | httpx.ConnectError),
            retries=self._retries,
            backoff=self._backoff,
        )
        self._check_cut(messages, tools, resp)
        return resp

    async def _chat_once(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]],
        sink: TextSink,
    ) -> LLMResponse:
        client = await self._client()
        start = time.monotonic()
        said: Wording = {
            "down": lambda _: LLMUnavailableError(OLLAMA_DOWN.format(host=self.host)),
            "timeout": lambda _: LLMUnavailableError(
                f"Ollama at {self.host} did not answer within {self._timeout:g} s"
            ),
            "failed": lambda exc: LLMUnavailableError(f"Ollama at {self.host} failed: {exc}"),
            "refused": lambda exc: LLMResponseError(
                f"Ollama refused the chat with {self._model}: {_refused(exc)}"
            ),
            "malformed": lambda exc: LLMResponseError(
                f"Ollama answered /api/chat with a malformed body: {exc}"
            ),
        }
        said = {**said, "garbled": said["malformed"]}
        with map_exceptions(_ERRORS, said):
            stream = await client.chat(
                model=self._model,
                messages=list(messages),
                tools=list(tools) or None,
                options=self._options or None,
                keep_alive=self._keep_alive,
                stream=True,
            )
            return await _collect(stream, sink, start)

    def _check_cut(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]],
        resp: LLMResponse,
    ) -> None:
        """Raise :class:`LLMContextError` when Ollama evaluated less than a too-long prompt."""
        num_ctx = self.context_tokens
        evaluated = resp.usage.prompt_tokens if resp.usage else None
        if self._count is None or not num_ctx or evaluated is None:
            return
        estimate = prompt_estimate(messages, tools, self._count)
        # A cached prefix also lowers the count, so only a prompt over num_ctx by our own
        # count is taken as cut.
        if estimate > num_ctx and evaluated < estimate:
            raise LLMContextError(
                f"Ollama cut the prompt to fit num_ctx {num_ctx}: it read {evaluated} of "
                f"~{estimate} tokens"
            )


def _keep_alive(value: str) -> float | str | None:
    """Ollama takes a duration ("30m") or a number of seconds (-1: keep the model loaded)."""
    try:
        return float(value)
    except ValueError:
        return value or None


def prompt_estimate(
    messages: Sequence[ChatMessage],
    tools: Sequence[Mapping[str, Any]],
    count: Callable[[str], int],
) -> int:
    """Our own count of a prompt's tokens (texts, tool calls and schemas, 4 per message)."""
    total = sum(count(str(m.get("content") or "")) + 4 for m in messages)
    calls = [m["tool_calls"] for m in messages if m.get("tool_calls")]
    if calls:
        total += count(json.dumps(calls, ensure_ascii=False, default=str))
    if tools:
        total += count(json.dumps(list(tools), ensure_ascii=False))
    return total


async def _collect(stream: Any, sink: TextSink, start: float) -> LLMResponse:
    """Join Ollama's streamed chunks, passing each piece of text to ``sink`` as it comes."""
    pieces: list[str] = []
    calls: list[ToolCall] = []
    first: float | None = None
    last: Any = None
    async for chunk in stream:
        message = getattr(chunk, "message", None)
        if message is None:
            raise LLMResponseError("Ollama answered /api/chat without a message")
        if message.content:
            first = first if first is not None else time.monotonic()
            pieces.append(message.content)
            await sink(message.content)
        for c in message.tool_calls or ():
            first = first if first is not None else time.monotonic()
            calls.append(ToolCall(name=str(c.function.name), arguments=c.function.arguments))
        last = chunk
    if last is None:
        raise LLMResponseError("Ollama answered /api/chat with an empty stream")
    content = "".join(pieces)
    if not content.strip() and not calls:
        raise LLMResponseError("Ollama answered /api/chat with an empty message")
    usage = Usage(
        prompt_tokens=last.prompt_eval_count,
        reply_tokens=last.eval_count,
        first_token_ms=None if first is None else (first - start) * 1000,
    )
    log.info("ollama %s: %s", last.model or "", usage.line())
    return LLMResponse(content=content, tool_calls=tuple(calls), usage=usage)


def list_models(host: str, timeout: float = 5.0) -> list[str]:
    """Names of the models Ollama at ``host`` has pulled (``GET /api/tags``), for doctor."""
    said: Wording = {
        **_down(host),
        "refused": lambda exc: LLMResponseError(
            f"Ollama at {host} refused /api/tags: {_refused(exc)}"
        ),
        "malformed": lambda _: LLMResponseError(
            f"Ollama at {host} answered /api/tags with a malformed body"
        ),
    }
    with map_exceptions(_ERRORS, said), ollama.Client(host=host, timeout=timeout) as client:
        return [m.model or "" for m in client.list().models]


def show_model(host: str, model: str, timeout: float = 5.0) -> ModelFacts:
    """What ``POST /api/show`` says of ``model``: its context length and tool support."""
    said: Wording = {
        **_down(host),
        "refused": lambda exc: LLMResponseError(
            f"Ollama at {host} does not show {model}: {_refused(exc)}"
        ),
        "malformed": lambda _: LLMResponseError(
            f"Ollama at {host} answered /api/show with a malformed body"
        ),
    }
    with map_exceptions(_ERRORS, said), ollama.Client(host=host, timeout=timeout) as client:
        shown = client.show(model)
    info = shown.modelinfo or {}
    lengths = [int(v) for k, v in info.items() if k.endswith(".context_length")]
    caps = shown.capabilities
    return ModelFacts(
        name=model,
        context_tokens=lengths[0] if lengths else None,
        tools=None if caps is None else "tools" in caps,
    )


# Ollama's streamed answer kept whole when the model writes a line separator of Unicode's.
#
# Ollama streams a chat as NDJSON, one JSON object a line. Its encoder (Go's) writes U+0085
# (next line) as the raw character inside a string, and so may a server that does not escape
# U+2028 and U+2029; the ``ollama`` package reads the stream with httpx's ``aiter_lines``,
# which splits lines as :meth:`str.splitlines` does, on those characters too. A reply holding one
# (a memory the person pasted with it, read back) was cut mid-string: the turn failed as an
# unusable answer (found by the world machine, tests/world). This transport writes the three as
# their JSON escapes before the lines are split: inside a JSON string the escape is the same
# character, and outside one they cannot stand in valid JSON.

# The UTF-8 of U+0085, U+2028 and U+2029, and what JSON reads as the same character.
_ESCAPES = (
    (b"\xc2\x85", b"\\u0085"),
    (b"\xe2\x80\xa8", b"\\u2028"),
    (b"\xe2\x80\xa9", b"\\u2029"),
)
# A chunk may end inside one of them: these tails wait for the next chunk.
_PARTIAL = (b"\xe2\x80", b"\xe2", b"\xc2")


def escape_separators(data: bytes) -> bytes:
    """``data`` (UTF-8 JSON) with raw U+0085, U+2028 and U+2029 written as JSON escapes."""
    for raw, escaped in _ESCAPES:
        data = data.replace(raw, escaped)
    return data


class _EscapedStream(httpx.AsyncByteStream):
    """A response body passed on with :func:`escape_separators` applied across its chunks."""

    def __init__(self, inner: httpx.AsyncByteStream) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        carry = b""
        async for chunk in self._inner:
            data = carry + chunk
            tail = next((len(p) for p in _PARTIAL if data.endswith(p)), 0)
            carry = data[len(data) - tail :] if tail else b""
            ready = data[: len(data) - tail]
            if ready:
                yield escape_separators(ready)
        if carry:
            yield escape_separators(carry)

    async def aclose(self) -> None:
        await self._inner.aclose()


class LineSafeTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, with NDJSON bodies passed through :class:`_EscapedStream`."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if "ndjson" not in response.headers.get("content-type", ""):
            return response
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_EscapedStream(stream),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
