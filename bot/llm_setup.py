"""The chat model the settings name: its client, and the context each prompt must fit.

Which server, and how its client and context are had, is the backend's
(:mod:`bot.model_backends`): this module only asks the one the settings name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.context_fit import DEFAULT_CONTEXT_TOKENS, ContextFit, tools_tokens
from agent.tools import SCHEMAS
from bot.model_backends import model_backend, none_found
from bot.settings import Settings
from memory.base.tokens import TokenCounter

if TYPE_CHECKING:
    from agent.llm import LLMClient


def context_length(settings: Settings) -> int:
    """The model's context length: the setting, or the server's own, or 8192."""
    if none_found(settings):
        # Discovery asked every usual place and its one sentence already says what to start:
        # asking the default server again would only warn of the same absence, in a log line.
        return settings.context_tokens or DEFAULT_CONTEXT_TOKENS
    return model_backend(settings).context(settings)


def build_llm(
    settings: Settings, counter: TokenCounter, context: int, model: str = ""
) -> LLMClient:
    """The client of ``model`` (the chat model unless named) on the configured backend."""
    return model_backend(settings).client(settings, counter, context, model)


def context_fit(settings: Settings, counter: TokenCounter, context: int) -> ContextFit:
    """What each prompt may take of ``context`` tokens (reply room and tool schemas out)."""
    return ContextFit(
        context_tokens=context,
        reply_tokens=settings.reply_tokens,
        tools_tokens=tools_tokens(list(SCHEMAS.values()), counter),
    )
