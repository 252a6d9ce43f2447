"""``pcai doctor``'s model lines: the server and its model, the context length, the tools.

The server is asked once, through the backend the settings name (:mod:`bot.model_backends`:
Ollama's ``/api/tags`` and ``/api/show``; an OpenAI-compatible server's ``/v1/models`` and
llama.cpp's ``/props``); when it cannot be reached, the context and
tools lines are skipped rather than failing three times for one cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.llm import ModelFacts
from bot.errors import DoctorWarning
from bot.model_backends import ModelBackend, model_backend
from bot.model_context import context_shortfall
from bot.model_discovery import Found, none_answers
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
    found: Found | None = None  # the server found running when the settings named none
    _facts: ModelFacts | None = field(default=None, init=False)
    _failed: str = field(default="", init=False)

    @property
    def backend(self) -> ModelBackend:
        """The backend the settings name (the one the front ends use too)."""
        return model_backend(self.settings)

    @property
    def where(self) -> str:
        """The server's address as the settings name it."""
        return self.backend.where(self.settings)

    def facts(self) -> ModelFacts:
        """What the server says of the chat model (asked once)."""
        if self._facts is not None:
            return self._facts
        if self._failed:
            raise ModelSkip(f"the model server could not be asked: {self._failed}")
        try:
            self._facts = self.backend.facts(self.settings)
        except Exception as exc:
            self._failed = " ".join(str(exc).split())
            raise
        return self._facts

    def server(self) -> str:
        """The backend is reachable and has the chat model (and was found, when it was)."""
        if not self.settings.llm_backend and self.settings.llm_discover.strip():
            self._failed = "none answers"  # the lines after this one are skipped
            raise RuntimeError(none_answers(self.settings, "en"))
        facts = self.facts()
        if self.found is not None:
            return (
                f"{self.found.label} at {self.where}, model {facts.name} present "
                "(found running: no PCAI_LLM_BACKEND set)"
            )
        return f"{self.backend.label} at {self.where}, model {facts.name} present"

    def context(self) -> str:
        """The context length the bot uses, against what the model takes and the bot needs."""
        facts = self.facts()
        s = self.settings
        served = facts.context_tokens
        used = self.backend.used_context(s, served)  # as the bot decides it at start
        if served and used > served:
            raise RuntimeError(
                f"PCAI_CONTEXT_TOKENS is {used} but the model {self.backend.serves} {served} "
                "tokens: prompts would be cut or refused; lower it"
            )
        short = context_shortfall(s, used, default_counter())  # as the bot refuses to start
        if short is not None:
            raise RuntimeError(short)
        if used < COMFORTABLE_CONTEXT_TOKENS:
            raise DoctorWarning(
                f"{used} tokens of context: prompts keep little history (8192 is comfortable)"
            )
        of = f" of the model's {served}" if served else ""
        return f"{used} tokens{self.backend.sent}{of}, {s.reply_tokens} kept for the reply"

    def tools(self) -> str:
        """The model's template takes tools (else memory_save and the rest never run)."""
        return self.backend.tools(self.settings, self.facts())
