"""Shared fixtures: a temporary data folder, settings, and one embedder per test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app import Services, build_services
from bot.settings import Settings, load_settings
from memory.embedders import E5Embedder
from tests.fakes.ollama_server import FakeOllama


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
