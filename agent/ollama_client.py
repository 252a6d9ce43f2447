"""Everything that talks to Ollama (the only module that imports ``ollama``)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import httpx
import numpy as np
import numpy.typing as npt
import ollama

from agent.llm import (
    ChatMessage,
    LLMResponse,
    LLMResponseError,
    LLMUnavailableError,
    TextSink,
    ToolCall,
)
from memory.errors import EmbedderUnavailableError
from memory.index.embedders import Vector, normalise, query_part

OLLAMA_DOWN = "Ollama is not reachable at {host}: start it with `ollama serve`"


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
        try:
            resp = self._client.embed(model=self._model, input=list(texts))
        except (httpx.HTTPError, ConnectionError) as exc:
            raise EmbedderUnavailableError(OLLAMA_DOWN.format(host=self.host)) from exc
        except ollama.ResponseError as exc:
            raise EmbedderUnavailableError(
                f"Ollama could not embed with {self._model}: {exc.error} "
                f"(try `ollama pull {self._model}`)"
            ) from exc
        except ValueError as exc:  # not JSON, or JSON of the wrong shape (pydantic)
            raise EmbedderUnavailableError(
                "Ollama answered /api/embed with a malformed body"
            ) from exc
        rows = np.asarray(resp.embeddings, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise EmbedderUnavailableError("Ollama answered /api/embed with a malformed body")
        return normalise(rows)

    def embed_query(self, text: str) -> Vector:
        """Embed a search query (its :func:`query_part`: a long message costs a short one's)."""
        return self._embed([query_part(text)])[0]

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed documents in batches."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        step = self._batch
        parts = [self._embed(texts[i : i + step]) for i in range(0, len(texts), step)]
        return np.vstack(parts)


class OllamaChat:
    """The chat model behind :class:`agent.llm.LLMClient`, through ``ollama.AsyncClient``.

    A connection error is retried ``retries`` times with exponential backoff (Ollama may be
    restarting); a timeout is not, since the user has already waited ``timeout`` seconds.
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
    ) -> None:
        self.host = host
        self._model = model
        self._timeout = timeout
        self._retries = max(0, retries)
        self._backoff = backoff_seconds
        self._options = dict(options or {})
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
        client = ollama.AsyncClient(host=self.host, timeout=self._timeout)
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

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        on_text: TextSink | None = None,
    ) -> LLMResponse:
        """One non-streaming /api/chat call; raises :class:`LLMError` subclasses only."""
        attempt = 0
        while True:
            try:
                resp = await self._chat_once(messages, tools)
                if on_text is not None and resp.content:
                    await on_text(resp.content)
                return resp
            except LLMUnavailableError as exc:
                if attempt >= self._retries or not isinstance(exc.__cause__, ConnectionError):
                    raise
                await asyncio.sleep(self._backoff * (2**attempt))
                attempt += 1

    async def _chat_once(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]]
    ) -> LLMResponse:
        client = await self._client()
        try:
            resp = await client.chat(
                model=self._model,
                messages=list(messages),
                tools=list(tools) or None,
                options=self._options or None,
            )
        except ConnectionError as exc:  # ollama turns httpx.ConnectError into this
            raise LLMUnavailableError(OLLAMA_DOWN.format(host=self.host)) from exc
        except httpx.TimeoutException as exc:
            raise LLMUnavailableError(
                f"Ollama at {self.host} did not answer within {self._timeout:g} s"
            ) from exc
        except httpx.HTTPError as exc:  # connection dropped mid-answer, protocol errors
            raise LLMUnavailableError(f"Ollama at {self.host} failed: {exc}") from exc
        except ollama.ResponseError as exc:
            raise LLMResponseError(
                f"Ollama refused the chat with {self._model}: {exc.error}"
            ) from exc
        except (ValueError, TypeError, KeyError) as exc:  # JSON or schema garbage
            raise LLMResponseError(
                f"Ollama answered /api/chat with a malformed body: {exc}"
            ) from exc
        return _to_response(resp)


def _to_response(resp: Any) -> LLMResponse:
    """Convert ollama's ChatResponse into plain data, rejecting a body with no message."""
    message = getattr(resp, "message", None)
    if message is None:
        raise LLMResponseError("Ollama answered /api/chat without a message")
    calls = tuple(
        ToolCall(name=str(c.function.name), arguments=c.function.arguments)
        for c in (message.tool_calls or ())
    )
    content = message.content or ""
    if not content.strip() and not calls:
        raise LLMResponseError("Ollama answered /api/chat with an empty message")
    return LLMResponse(content=content, tool_calls=calls)


def list_models(host: str, timeout: float = 5.0) -> list[str]:
    """Names of the models Ollama at ``host`` has pulled (``GET /api/tags``), for doctor."""
    try:
        with ollama.Client(host=host, timeout=timeout) as client:
            return [m.model or "" for m in client.list().models]
    except (ConnectionError, httpx.HTTPError) as exc:
        raise LLMUnavailableError(OLLAMA_DOWN.format(host=host)) from exc
    except ollama.ResponseError as exc:
        raise LLMResponseError(f"Ollama at {host} refused /api/tags: {exc.error}") from exc
    except ValueError as exc:  # not JSON, or JSON of the wrong shape (pydantic)
        raise LLMResponseError(
            f"Ollama at {host} answered /api/tags with a malformed body"
        ) from exc
