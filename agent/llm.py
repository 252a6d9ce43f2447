"""The LLM seam: one protocol, plain data in and out, and the errors the pipeline handles.

The Ollama implementation lives in ``agent.ollama_client`` (the only module that imports
``ollama``); tests and benchmarks may pass any object with the same ``chat`` method.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# The errors live in agent.errors; re-exported because the clients raise them from here.
from agent.errors import LLMError as LLMError
from agent.errors import LLMResponseError as LLMResponseError
from agent.errors import LLMUnavailableError as LLMUnavailableError

# One chat message in Ollama's wire shape: {"role": ..., "content": ..., "tool_calls": [...]}.
ChatMessage = Mapping[str, Any]

# Receives each piece of the reply's text as the model writes it (streaming). The complete
# reply is still the :class:`LLMResponse` that ``chat`` returns: the stream joined.
TextSink = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for; ``arguments`` as received (a dict, or raw text)."""

    name: str
    arguments: Any = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """The model's answer: text, tool calls, or both."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation before the tool results."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"function": {"name": c.name, "arguments": c.arguments}} for c in self.tool_calls
            ]
        return msg


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
