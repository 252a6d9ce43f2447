"""The real llama.cpp server (one per test module) and the Telegram stand-in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.harness import Emulator
from tests.realmodel.build_server import BuildError
from tests.realmodel.server import LlamaServer


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-server with SmolLM2 on a free port; a test fails (never skips) without it."""
    server = LlamaServer()
    try:
        server.start(tmp_path_factory.mktemp("llama") / "server.log")
    except (BuildError, OSError) as exc:
        pytest.fail(
            f"the real model server is not ready ({exc}); `make test` builds it first "
            "(python tests/realmodel/build_server.py)"
        )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    """The project's Telegram Bot API stand-in."""
    emu = Emulator()
    yield emu
    emu.stop()
