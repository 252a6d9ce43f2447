"""The model servers PCAI talks to, chosen in one place (``PCAI_LLM_BACKEND``).

Each backend builds its own client, reads its own facts (the context length, whether its
template calls tools) and says whether its server answers. The terminal chat, Telegram and
``pcai doctor`` all take the backend from :func:`model_backend`, so they cannot disagree on
which server the settings name.

Ollama is sent ``num_ctx`` (the setting, or 8192 unless ``/api/show`` says the model takes
less) and ``keep_alive`` on every call. An OpenAI-compatible server's context is the setting,
else what the server reports (llama.cpp's ``/props``, vLLM's ``max_model_len``), else 8192.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agent.context_fit import DEFAULT_CONTEXT_TOKENS
from agent.errors import LLMError
from agent.texts import say
from bot.errors import SettingsError
from bot.settings import Settings
from memory.base.tokens import TokenCounter

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent.llm import LLMClient, ModelFacts
    from memory.index.embedders import Embedder

log = logging.getLogger(__name__)


class ModelBackend(Protocol):
    """One kind of model server: its client, its facts and its reachability."""

    @property
    def name(self) -> str:
        """What PCAI_LLM_BACKEND says."""
        ...

    @property
    def label(self) -> str:
        """How a line names it ("Ollama")."""
        ...

    @property
    def serves(self) -> str:
        """How a line says what the model takes ("takes at most", "serves")."""
        ...

    @property
    def sent(self) -> str:
        """How the context reaches the server, for the doctor's line ("" when not sent)."""
        ...

    def validate(self, settings: Settings) -> None:
        """Raise :class:`SettingsError` when the settings cannot reach this server."""
        ...

    def where(self, settings: Settings) -> str:
        """The server's address as the settings name it."""
        ...

    def too_small(self, settings: Settings, context: int, bigger: int) -> tuple[str, str]:
        """What a context of ``context`` tokens is said to be, and the fix (``bigger`` tokens)."""
        ...

    def reachable(self, settings: Settings, timeout: float = 2.0) -> bool:
        """Whether the server answers now."""
        ...

    def facts(self, settings: Settings) -> ModelFacts:
        """What the server says of the chat model (raises when it cannot say)."""
        ...

    def used_context(self, settings: Settings, served: int | None) -> int:
        """The context the bot uses when the server says it serves ``served`` tokens."""
        ...

    def context(self, settings: Settings) -> int:
        """The context the bot uses, asking the server (8192 when it cannot be asked)."""
        ...

    def client(
        self, settings: Settings, counter: TokenCounter, context: int, model: str = ""
    ) -> LLMClient:
        """The client of ``model`` (the chat model unless named) on this server."""
        ...

    def tools(self, settings: Settings, facts: ModelFacts) -> str:
        """``pcai doctor``'s tools line: the template calls tools (else raises, saying why)."""
        ...

    def down(self, settings: Settings, lang: str) -> str:
        """The one sentence saying chat needs this server, its address and what to start."""
        ...


def _answers(url: str, timeout: float, headers: dict[str, str] | None = None) -> bytes | None:
    """The body ``url`` answers with (HTTP 200), None when nothing answers."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return bytes(resp.read())
    except (OSError, ValueError):
        return None


def shown_url(url: str) -> str:
    """``url`` as it may be printed: the credentials of ``scheme://user:pass@host`` hidden."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" not in host:
        return url
    return f"{scheme}://***@{host.rpartition('@')[2]}{slash}{path}"


def ollama_reachable(host: str, timeout: float = 2.0) -> bool:
    """Whether an Ollama server answers ``/api/version`` at ``host``."""
    url = (host if "://" in host else f"http://{host}").rstrip("/") + "/api/version"
    body = _answers(url, timeout)
    try:
        return body is not None and "version" in json.loads(body or b"{}")
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class OllamaBackend:
    """Ollama's own API (the default)."""

    name: str = "ollama"
    label: str = "Ollama"
    serves: str = "takes at most"
    sent: str = " (sent as num_ctx)"

    def validate(self, settings: Settings) -> None:
        """Any ``OLLAMA_HOST`` will do (the client adds the scheme it lacks)."""

    def where(self, settings: Settings) -> str:
        """``OLLAMA_HOST``."""
        return settings.ollama_host

    def too_small(self, settings: Settings, context: int, bigger: int) -> tuple[str, str]:
        """The model takes no more: another model."""
        said = f"the model {settings.chat_model} takes at most {context} tokens"
        return said, "pick a model with a longer context"

    def reachable(self, settings: Settings, timeout: float = 2.0) -> bool:
        """``/api/version`` answers."""
        return ollama_reachable(settings.ollama_host, timeout)

    def facts(self, settings: Settings) -> ModelFacts:
        """``/api/tags`` (the model is pulled) and ``/api/show`` (its context and tools)."""
        from agent.ollama_client import list_models, show_model

        s = settings
        models = list_models(s.ollama_host, timeout=5)
        if not any(m.split(":")[0] == s.chat_model.split(":")[0] for m in models):
            raise RuntimeError(
                f"reachable at {s.ollama_host} but model {s.chat_model} is missing: "
                f"run `ollama pull {s.chat_model}`"
            )
        return show_model(s.ollama_host, s.chat_model)

    def used_context(self, settings: Settings, served: int | None) -> int:
        """The setting, else 8192 capped by what the model takes."""
        if settings.context_tokens:
            return settings.context_tokens
        return min(DEFAULT_CONTEXT_TOKENS, served or DEFAULT_CONTEXT_TOKENS)

    def context(self, settings: Settings) -> int:
        """8192, or less when the model takes less (``/api/show``); 8192 when Ollama is down."""
        if settings.context_tokens:
            return settings.context_tokens
        from agent.ollama_client import show_model

        try:
            most = show_model(settings.ollama_host, settings.chat_model).context_tokens
        except LLMError as exc:
            log.warning("the model's context length unknown (%s): sending num_ctx 8192", exc)
            return DEFAULT_CONTEXT_TOKENS
        return self.used_context(settings, most)

    def client(
        self, settings: Settings, counter: TokenCounter, context: int, model: str = ""
    ) -> LLMClient:
        """:class:`~agent.ollama_client.OllamaChat` with ``num_ctx`` and ``keep_alive``."""
        from agent.ollama_client import OllamaChat

        return OllamaChat(
            settings.ollama_host,
            model or settings.chat_model,
            timeout=settings.ollama_timeout_seconds,
            context_tokens=context,
            keep_alive=settings.keep_alive,
            options={"num_predict": settings.reply_tokens},
            count=counter.count,
        )

    def tools(self, settings: Settings, facts: ModelFacts) -> str:
        """``/api/show``'s capabilities name tools."""
        if facts.tools is False:
            raise RuntimeError(
                f"{facts.name} does not take tools (its template has none): pick a model "
                "that does, e.g. qwen2.5:7b"
            )
        return "the model takes tools" if facts.tools else "the server does not say"

    def down(self, settings: Settings, lang: str) -> str:
        """Start Ollama and pull the model."""
        return say("needs_ollama", lang, model=settings.chat_model, url=settings.ollama_host)


@dataclass(frozen=True, slots=True)
class OpenAIBackend:
    """Any server of ``/v1/chat/completions``: llama.cpp, vLLM, LM Studio, a hosted one."""

    name: str = "openai"
    label: str = "OpenAI-compatible"
    serves: str = "serves"
    sent: str = ""

    def validate(self, settings: Settings) -> None:
        """``PCAI_LLM_BASE_URL`` is an http(s) address."""
        if not settings.llm_base_url.startswith(("http://", "https://")):
            raise SettingsError(
                "PCAI_LLM_BASE_URL must be the server's address like http://127.0.0.1:8080/v1 "
                "when PCAI_LLM_BACKEND is 'openai'"
            )

    def where(self, settings: Settings) -> str:
        """``PCAI_LLM_BASE_URL``, any ``user:password@`` in it shown as ``***@``."""
        return shown_url(settings.llm_base_url)

    def too_small(self, settings: Settings, context: int, bigger: int) -> tuple[str, str]:
        """The server was started with a small context: start it with a bigger one."""
        said = f"the server's context is {context} tokens"
        return said, f"start llama-server with -c {bigger} (vLLM: --max-model-len {bigger})"

    def reachable(self, settings: Settings, timeout: float = 2.0) -> bool:
        """``/models`` answers (with the key, when one is set)."""
        key = settings.llm_api_key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        url = settings.llm_base_url.rstrip("/") + "/models"
        return _answers(url, timeout, headers) is not None

    def facts(self, settings: Settings) -> ModelFacts:
        """``/v1/models`` and llama.cpp's ``/props``."""
        from agent.openai_client import server_facts

        s = settings
        return server_facts(s.llm_base_url, s.chat_model, s.llm_api_key)

    def used_context(self, settings: Settings, served: int | None) -> int:
        """The setting, else what the server serves, else 8192."""
        return settings.context_tokens or served or DEFAULT_CONTEXT_TOKENS

    def context(self, settings: Settings) -> int:
        """The setting, or the server's own, or 8192 when it cannot be asked."""
        if settings.context_tokens:
            return settings.context_tokens
        try:
            served = self.facts(settings).context_tokens
        except LLMError as exc:
            log.warning("context length unknown (%s): assuming %d", exc, DEFAULT_CONTEXT_TOKENS)
            return DEFAULT_CONTEXT_TOKENS
        return self.used_context(settings, served)

    def client(
        self, settings: Settings, counter: TokenCounter, context: int, model: str = ""
    ) -> LLMClient:
        """:class:`~agent.openai_client.OpenAIChat` with ``max_tokens`` the reply room."""
        from agent.openai_client import OpenAIChat

        return OpenAIChat(
            settings.llm_base_url,
            model or settings.chat_model,
            api_key=settings.llm_api_key,
            timeout=settings.ollama_timeout_seconds,
            reply_tokens=settings.reply_tokens,
            context_tokens=context,
        )

    def tools(self, settings: Settings, facts: ModelFacts) -> str:
        """llama.cpp's ``/props`` says its template cannot call tools: fail, saying what to do;
        else one tiny chat offering one tool (a server that drops tools refuses it)."""
        if facts.tools is False:
            raise RuntimeError(
                f"the chat template of {facts.name} has no tools (the server's /props says "
                "supports_tools: false), so memory_save and the rest never run: start "
                "llama-server with --jinja and a template that calls tools "
                "(--chat-template-file), or pick a model whose template does"
            )
        said = asyncio.run(_offer_a_tool(settings))
        return f"{said} (the template calls tools)" if facts.tools else said

    def down(self, settings: Settings, lang: str) -> str:
        """Start the server, or point PCAI_LLM_BASE_URL at it."""
        return say("needs_server", lang, model=settings.chat_model, url=self.where(settings))


async def _offer_a_tool(settings: Settings) -> str:
    """One tiny chat offering one tool: a server whose template drops tools refuses it."""
    from agent.openai_client import OpenAIChat

    s = settings
    llm = OpenAIChat(s.llm_base_url, s.chat_model, api_key=s.llm_api_key, reply_tokens=8)
    tool = {
        "type": "function",
        "function": {
            "name": "ping",
            "description": "Answer a ping.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    try:
        await llm.chat([{"role": "user", "content": "ping"}], [tool])
    except LLMError as exc:
        if "empty message" in str(exc):  # it took the tools and said nothing: fine
            return "a chat offering a tool was accepted"
        raise RuntimeError(f"a chat offering a tool was refused: {exc}") from exc
    finally:
        await llm.aclose()
    return "a chat offering a tool was accepted"


# Every backend PCAI_LLM_BACKEND may name (bot.settings checks the name against these keys).
BACKENDS: dict[str, ModelBackend] = {b.name: b for b in (OllamaBackend(), OpenAIBackend())}


def model_backend(settings: Settings) -> ModelBackend:
    """The one backend the settings name: every front end and the doctor take it from here."""
    try:
        return BACKENDS[settings.llm_backend or "ollama"]  # "": none found running (Ollama's)
    except KeyError:
        named = ", ".join(BACKENDS)
        said = f"PCAI_LLM_BACKEND {settings.llm_backend!r} is not one of {named}"
        raise ValueError(said) from None


def _e5_embedder(settings: Settings) -> Embedder:
    """The embedded e5 model (the default)."""
    from agent.deferred import worker_lanes
    from memory.index.embedders import E5Embedder

    # One model handle per lane of the deferred-work worker, and one more: a turn's query
    # never waits for a batch of passages to finish (a handle costs ~20 MB).
    return E5Embedder(batch_size=settings.index.embed_batch_size, instances=worker_lanes() + 1)


def _ollama_embedder(settings: Settings) -> Embedder:
    """Ollama's ``/api/embed`` with ``PCAI_EMBED_MODEL``."""
    from agent.ollama_client import OllamaEmbedder

    return OllamaEmbedder(
        settings.ollama_host,
        settings.embed_model,
        batch_size=settings.index.embed_batch_size,
        timeout=settings.ollama_timeout_seconds,
    )


# Every embedder PCAI_EMBEDDER may name (bot.settings checks the name against these keys).
EMBEDDERS: dict[str, Callable[[Settings], Embedder]] = {
    "e5": _e5_embedder,
    "ollama": _ollama_embedder,
}


@dataclass(frozen=True, slots=True)
class ModelServer:
    """The configured backend bound to the settings: what a front end asks of the server."""

    backend: ModelBackend
    settings: Settings

    @property
    def where(self) -> str:
        """The server's address."""
        return self.backend.where(self.settings)

    def reachable(self) -> bool:
        """Whether the server answers now."""
        return self.backend.reachable(self.settings)

    def down(self, lang: str) -> str:
        """The one sentence naming the server, its address and what to start (every kind of
        server, when none was named and none was found running)."""
        if none_found(self.settings):
            from bot.model_discovery import none_answers

            return none_answers(self.settings, lang)
        return self.backend.down(self.settings, lang)


def none_found(settings: Settings) -> bool:
    """Whether these are the settings discovery left when no server answered: none named, and
    places to look at (a found server names its backend in the settings it returns)."""
    return not settings.llm_backend and bool(settings.llm_discover.strip())


def model_server(settings: Settings) -> ModelServer:
    """The server the settings name, for a front end."""
    return ModelServer(model_backend(settings), settings)
