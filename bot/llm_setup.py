"""The chat model the settings name: its client, and the context each prompt must fit.

Ollama is sent ``num_ctx`` (the setting, or 8192 unless ``/api/show`` says the model takes
less; decided once at start) and ``keep_alive`` on every call. An
OpenAI-compatible server's context is the setting, else what the server reports at start
(llama.cpp's ``/props``, vLLM's ``max_model_len``), else 8192.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agent.context_fit import DEFAULT_CONTEXT_TOKENS, ContextFit, tools_tokens
from agent.errors import LLMError
from agent.tools import SCHEMAS
from bot.settings import Settings
from memory.base.tokens import TokenCounter

if TYPE_CHECKING:
    from agent.llm import LLMClient

log = logging.getLogger(__name__)


def context_length(settings: Settings) -> int:
    """The model's context length: the setting, or the server's own, or 8192."""
    if settings.context_tokens:
        return settings.context_tokens
    if settings.llm_backend != "openai":
        return _ollama_context(settings)
    from agent.openai_client import server_facts

    try:
        facts = server_facts(settings.llm_base_url, settings.chat_model, settings.llm_api_key)
    except LLMError as exc:
        log.warning("context length unknown (%s): assuming %d", exc, DEFAULT_CONTEXT_TOKENS)
        return DEFAULT_CONTEXT_TOKENS
    return facts.context_tokens or DEFAULT_CONTEXT_TOKENS


def _ollama_context(settings: Settings) -> int:
    """8192, or less when the model takes less (``/api/show``); 8192 when Ollama is down."""
    from agent.ollama_client import show_model

    try:
        most = show_model(settings.ollama_host, settings.chat_model).context_tokens
    except LLMError as exc:
        log.warning("the model's context length unknown (%s): sending num_ctx 8192", exc)
        return DEFAULT_CONTEXT_TOKENS
    return min(DEFAULT_CONTEXT_TOKENS, most or DEFAULT_CONTEXT_TOKENS)


def build_llm(
    settings: Settings, counter: TokenCounter, context: int, model: str = ""
) -> LLMClient:
    """The client of ``model`` (the chat model unless named) on the configured backend."""
    name = model or settings.chat_model
    if settings.llm_backend == "openai":
        from agent.openai_client import OpenAIChat

        return OpenAIChat(
            settings.llm_base_url,
            name,
            api_key=settings.llm_api_key,
            timeout=settings.ollama_timeout_seconds,
            reply_tokens=settings.reply_tokens,
            context_tokens=context,
        )
    from agent.ollama_client import OllamaChat

    return OllamaChat(
        settings.ollama_host,
        name,
        timeout=settings.ollama_timeout_seconds,
        context_tokens=context,
        keep_alive=settings.keep_alive,
        options={"num_predict": settings.reply_tokens},
        count=counter.count,
    )


def context_fit(settings: Settings, counter: TokenCounter, context: int) -> ContextFit:
    """What each prompt may take of ``context`` tokens (reply room and tool schemas out)."""
    return ContextFit(
        context_tokens=context,
        reply_tokens=settings.reply_tokens,
        tools_tokens=tools_tokens(list(SCHEMAS.values()), counter),
    )
