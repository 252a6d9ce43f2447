"""``pcai doctor``'s model lines: the server and its model, the context length, the tools.

The server is asked once (Ollama: ``/api/tags`` and ``/api/show``; an OpenAI-compatible
server: ``/v1/models`` and llama.cpp's ``/props``); when it cannot be reached, the context and
tools lines are skipped rather than failing three times for one cause.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agent.context_fit import DEFAULT_CONTEXT_TOKENS
from agent.errors import LLMError
from agent.llm import ModelFacts
from bot.errors import DoctorWarning
from bot.model_context import context_shortfall
from bot.settings import Settings
from memory.base.tokens import default_counter

# Below this a prompt holds the system text, tools and memory block but little history.
COMFORTABLE_CONTEXT_TOKENS = 4096


class ModelSkip(Exception):
    """The line does not apply (the server could not be asked)."""


@dataclass
class ModelChecks:
    """The three model lines over one look at the server."""

    settings: Settings
    _facts: ModelFacts | None = field(default=None, init=False)
    _failed: str = field(default="", init=False)

    @property
    def where(self) -> str:
        """The server's address as the settings name it."""
        s = self.settings
        return s.llm_base_url if s.llm_backend == "openai" else s.ollama_host

    def facts(self) -> ModelFacts:
        """What the server says of the chat model (asked once)."""
        if self._facts is not None:
            return self._facts
        if self._failed:
            raise ModelSkip(f"the model server could not be asked: {self._failed}")
        try:
            self._facts = self._ask()
        except Exception as exc:
            self._failed = " ".join(str(exc).split())
            raise
        return self._facts

    def _ask(self) -> ModelFacts:
        s = self.settings
        if s.llm_backend == "openai":
            from agent.openai_client import server_facts

            return server_facts(s.llm_base_url, s.chat_model, s.llm_api_key)
        from agent.ollama_client import list_models, show_model

        models = list_models(s.ollama_host, timeout=5)
        if not any(m.split(":")[0] == s.chat_model.split(":")[0] for m in models):
            raise RuntimeError(
                f"reachable at {s.ollama_host} but model {s.chat_model} is missing: "
                f"run `ollama pull {s.chat_model}`"
            )
        return show_model(s.ollama_host, s.chat_model)

    def server(self) -> str:
        """The backend is reachable and has the chat model."""
        facts = self.facts()
        kind = "OpenAI-compatible" if self.settings.llm_backend == "openai" else "Ollama"
        return f"{kind} at {self.where}, model {facts.name} present"

    def context(self) -> str:
        """The context length the bot uses, against what the model takes and the bot needs."""
        facts = self.facts()
        s = self.settings
        served = facts.context_tokens
        # As bot.llm_setup decides it: the setting, else the server's own (OpenAI-compatible)
        # or 8192 capped by what the model takes (Ollama).
        if s.context_tokens:
            used = s.context_tokens
        elif s.llm_backend == "openai":
            used = served or DEFAULT_CONTEXT_TOKENS
        else:
            used = min(DEFAULT_CONTEXT_TOKENS, served or DEFAULT_CONTEXT_TOKENS)
        if served and used > served:
            what = "takes at most" if s.llm_backend == "ollama" else "serves"
            raise RuntimeError(
                f"PCAI_CONTEXT_TOKENS is {used} but the model {what} {served} tokens: "
                "prompts would be cut or refused; lower it"
            )
        short = context_shortfall(s, used, default_counter())  # as the bot refuses to start
        if short is not None:
            raise RuntimeError(short)
        if used < COMFORTABLE_CONTEXT_TOKENS:
            raise DoctorWarning(
                f"{used} tokens of context: prompts keep little history (8192 is comfortable)"
            )
        sent = " (sent as num_ctx)" if s.llm_backend == "ollama" else ""
        of = f" of the model's {served}" if served else ""
        return f"{used} tokens{sent}{of}, {s.reply_tokens} kept for the reply"

    def tools(self) -> str:
        """The model's template takes tools (else memory_save and the rest never run)."""
        facts = self.facts()
        if self.settings.llm_backend == "ollama":
            if facts.tools is False:
                raise RuntimeError(
                    f"{facts.name} does not take tools (its template has none): pick a model "
                    "that does, e.g. qwen2.5:7b"
                )
            return "the model takes tools" if facts.tools else "the server does not say"
        return asyncio.run(self._probe_tools())

    async def _probe_tools(self) -> str:
        """One tiny chat offering one tool: a server whose template drops tools refuses it."""
        from agent.openai_client import OpenAIChat

        s = self.settings
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
