"""The LLM seam: one protocol, plain data in and out, and the errors the pipeline handles.

Two implementations: Ollama's native API in ``agent.ollama_client`` (the only module that
imports ``ollama``) and the OpenAI-compatible ``/v1/chat/completions`` (llama.cpp's server,
vLLM, LM Studio, hosted endpoints) in ``agent.openai_client`` (the only one importing
``openai``). Tests and benchmarks may pass any object with the same ``chat`` method.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

# The errors live in agent.errors; re-exported because the clients raise them from here.
from agent.errors import LLMContextError as LLMContextError
from agent.errors import LLMError as LLMError
from agent.errors import LLMResponseError as LLMResponseError
from agent.errors import LLMUnavailableError as LLMUnavailableError

# One chat message in Ollama's wire shape: {"role": ..., "content": ..., "tool_calls": [...]}.
ChatMessage = Mapping[str, Any]

# Receives each piece of the reply's text as the model writes it (streaming). The complete
# reply is still the :class:`LLMResponse` that ``chat`` returns: the stream joined.
TextSink = Callable[[str], Awaitable[None]]


# A client's one exception table: which SDK errors (first row that matches wins, as in an
# ``except`` chain) mean which failure. Each call site words the failures it can meet.
ExceptionTable = Sequence[tuple[type[Exception] | tuple[type[Exception], ...], str]]
# A call site's sentences: failure key -> the error to raise from the SDK's.
Wording = Mapping[str, Callable[[Exception], Exception]]


@contextmanager
def map_exceptions(table: ExceptionTable, said: Wording) -> Iterator[None]:
    """Raise, for the first row of ``table`` an error matches, ``said[key](exc)`` from it.

    A key the site does not word re-raises the SDK's error as it is (that site never
    caught it). After httpx's ``map_exceptions``: the mapping lives in one table per client.
    """
    try:
        yield
    except Exception as exc:
        for types, key in table:
            if isinstance(exc, types):
                make = said.get(key)
                if make is None:
                    raise
                raise make(exc) from exc
        raise


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for; ``arguments`` as received (a dict, or raw text)."""

    name: str
    arguments: Any = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """The server's own accounting of one call (None where the server does not say)."""

    prompt_tokens: int | None = None
    cached_tokens: int | None = None  # of prompt_tokens, served from the server's cache
    reply_tokens: int | None = None
    first_token_ms: float | None = None  # from sending the request to the first piece

    def line(self) -> str:
        """One log line: ``prompt 812 tokens (640 cached), reply 41, first token 230 ms``."""
        parts = [f"prompt {_n(self.prompt_tokens)} tokens ({_n(self.cached_tokens)} cached)"]
        parts.append(f"reply {_n(self.reply_tokens)}")
        if self.first_token_ms is not None:
            parts.append(f"first token {self.first_token_ms:.0f} ms")
        return ", ".join(parts)


def _n(value: int | None) -> str:
    return "?" if value is None else str(value)


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """The model's answer: text, tool calls, or both (and the server's counts, if given)."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = field(default=None, compare=False)

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation before the tool results."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"function": {"name": c.name, "arguments": c.arguments}} for c in self.tool_calls
            ]
        return msg


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """What a server says about a model (for ``pcai doctor`` and the context length)."""

    name: str
    context_tokens: int | None = None  # the most it can take (Ollama) or its n_ctx (llama.cpp)
    tools: bool | None = None  # whether its chat template takes tools (None: not said)


class LLMClient(Protocol):
    """A chat model with tool calling."""

    @property
    def model(self) -> str:
        """The model's name (for logs and /why)."""
        ...

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        on_text: TextSink | None = None,
    ) -> LLMResponse:
        """Send ``messages`` (and the tools' JSON schemas); raise :class:`LLMError` on failure.

        With ``on_text``, each piece of the reply's text is awaited through it as it arrives;
        the returned response holds the whole reply either way.
        """
        ...


async def with_retries(
    call: Callable[[TextSink], Awaitable[LLMResponse]],
    on_text: TextSink | None,
    retryable: Callable[[BaseException | None], bool],
    *,
    retries: int,
    backoff: float,
) -> LLMResponse:
    """``call(sink)``, again after an :class:`LLMUnavailableError` whose cause is
    ``retryable`` (exponential backoff, at most ``retries`` times), but never once any text
    went through ``on_text``: a retry would repeat it to the user."""
    sent: list[str] = []

    async def sink(piece: str) -> None:
        sent.append(piece)
        if on_text is not None:
            await on_text(piece)

    attempt = 0
    while True:
        try:
            return await call(sink)
        except LLMUnavailableError as exc:
            if attempt >= retries or sent or not retryable(exc.__cause__):
                raise
            await asyncio.sleep(backoff * (2**attempt))
            attempt += 1
