"""Shared fixtures: a clean environment, a temporary data folder, settings, one embedder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app import Services, build_services
from bot.settings import Settings, load_settings
from memory.index.embedders import E5Embedder
from tests.fakes.ollama_server import FakeOllama

# The prefixes of every variable PCAI's settings read (bot/settings.py).
SETTING_PREFIXES = ("PCAI_", "TELEGRAM_", "OLLAMA_")


@pytest.fixture(autouse=True)
def clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Every test starts without the developer's settings, in an empty folder of its own.

    A token or data dir exported in the shell would otherwise change what a test checks, and
    a test that forgets ``PCAI_DATA_DIR`` would write into the checkout's ``./botmemory``.
    Returns the data dir ``PCAI_DATA_DIR`` points at (inside the test's working folder).
    """
    for name in list(os.environ):
        if name.startswith(SETTING_PREFIXES):
            monkeypatch.delenv(name)
    cwd = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(cwd)
    data_dir = cwd / "botmemory"
    monkeypatch.setenv("PCAI_DATA_DIR", str(data_dir))
    # No test may find a model server the developer happens to run (Ollama on 11434, ...):
    # discovery asks only port 9, where nothing listens; discovery's own tests set their fakes.
    monkeypatch.setenv("PCAI_LLM_DISCOVER", "127.0.0.1:9")
    return data_dir


@pytest.fixture(scope="session")
def embedder() -> E5Embedder:
    """The real embedded model, loaded once (it is fast, but not free)."""
    return E5Embedder()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Default settings with the data folder under ``tmp_path``."""
    return load_settings({"PCAI_DATA_DIR": str(tmp_path / "botmemory")})


@pytest.fixture
def services(settings: Settings, embedder: E5Embedder) -> Iterator[Services]:
    """Every service, built by the composition root on a fresh data folder."""
    built = build_services(settings, embedder=embedder)
    built.memory.ensure_index()
    yield built
    built.close()


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A fake Ollama on 127.0.0.1 speaking the real API (see tests/fakes/ollama_server.py)."""
    server = FakeOllama()
    yield server
    server.stop()
