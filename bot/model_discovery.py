"""Finding the model server the person already runs, when the settings name none.

With no ``PCAI_LLM_BACKEND``, ``PCAI_LLM_BASE_URL`` or ``OLLAMA_HOST`` set, the places of
``PCAI_LLM_DISCOVER`` (Ollama's 11434, llama.cpp's 8080, LM Studio's 1234, vLLM's 8000 on
127.0.0.1) are asked at once, each for at most half a second: Ollama's own ``/api/version``
first (Ollama also speaks ``/v1``), then the OpenAI-compatible ``/v1/models``. The first place
in the list that answers is used, and said in one line; when none does, one sentence names
what to start. Settings that name a server are never second-guessed.
"""

from __future__ import annotations

import dataclasses
import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from agent.texts import say
from bot.model_backends import ollama_reachable
from bot.settings import Settings

# A server on this machine answers in milliseconds and a closed port refuses at once: half a
# second bounds only a port that swallows the connection.
PROBE_SECONDS = 0.5
# How /v1/models' ``owned_by`` names the server that answered.
OWNERS = {"llamacpp": "llama.cpp's llama-server", "vllm": "vLLM"}


@dataclass(frozen=True, slots=True)
class Found:
    """A model server that answered: its backend, address and the models it lists."""

    backend: str  # a key of bot.model_backends.BACKENDS
    url: str  # OLLAMA_HOST or PCAI_LLM_BASE_URL as the settings would name it
    label: str
    models: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Discovery:
    """The settings with the server found (unchanged when named or none answers), and the
    one line saying so ("" when the settings named the server)."""

    settings: Settings
    line: str
    found: Found | None = None


def places(settings: Settings) -> list[str]:
    """The addresses ``PCAI_LLM_DISCOVER`` lists, in order."""
    return [p for p in settings.llm_discover.replace(",", " ").split() if p]


def _get_json(url: str, timeout: float) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return json.loads(resp.read() or b"null")
    except (OSError, ValueError):
        return None


def probe(place: str, timeout: float = PROBE_SECONDS) -> Found | None:
    """What answers at ``place`` (``host:port``): Ollama, an OpenAI-compatible server, or None."""
    base = (place if "://" in place else f"http://{place}").rstrip("/")
    if ollama_reachable(base, timeout):
        tags = _get_json(f"{base}/api/tags", timeout)
        rows = tags.get("models", []) if isinstance(tags, dict) else []
        names = tuple(str(m["name"]) for m in rows if isinstance(m, dict) and "name" in m)
        return Found("ollama", base, "Ollama", names)
    listed = _get_json(f"{base}/v1/models", timeout)
    rows = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(rows, list):
        return None
    models = [m for m in rows if isinstance(m, dict) and m.get("id")]
    owner = str(models[0].get("owned_by", "")) if models else ""
    label = OWNERS.get(owner, "an OpenAI-compatible server")
    return Found("openai", f"{base}/v1", label, tuple(str(m["id"]) for m in models))


def none_answers(settings: Settings, lang: str) -> str:
    """The one sentence naming what to start, with the exact command for each server."""
    where = ", ".join(places(settings))
    return say("model_none_found", lang, places=where, model=settings.chat_model)


def discover(settings: Settings, timeout: float = PROBE_SECONDS) -> Discovery:
    """The server the settings name, else the first of ``PCAI_LLM_DISCOVER`` that answers."""
    looked = places(settings)
    if settings.llm_backend or not looked:
        return Discovery(settings, "")
    with ThreadPoolExecutor(max_workers=len(looked)) as pool:
        answers = list(pool.map(lambda place: probe(place, timeout), looked))
    found = next((a for a in answers if a is not None), None)
    if found is None:
        return Discovery(settings, none_answers(settings, "en"))
    if found.backend == "ollama":
        used = dataclasses.replace(settings, llm_backend="ollama", ollama_host=found.url)
        model = settings.chat_model
        note = "" if _pulled(model, found.models) else f" (not pulled yet: `ollama pull {model}`)"
    else:
        # llama-server serves one model under any name; vLLM and LM Studio need theirs.
        model = settings.chat_model
        if found.models and model not in found.models:
            model = found.models[0]
        used = dataclasses.replace(
            settings, llm_backend="openai", llm_base_url=found.url, chat_model=model
        )
        note = ""
    line = (
        f"Model server: {found.label} at {found.url}, model {model}{note} (found running; "
        "PCAI_LLM_BACKEND names another)"
    )
    return Discovery(used, line, found)


def _pulled(model: str, names: tuple[str, ...]) -> bool:
    """Whether Ollama lists ``model`` (a name without a tag is its ``latest``)."""
    return any(n.split(":")[0] == model.split(":")[0] for n in names)
