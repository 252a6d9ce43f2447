"""Fixtures for end-to-end tests: one Telegram stand-in per module, a fake Ollama, the bot."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import BotProcess, Emulator, bot_env, free_port, webhook_env
from tests.fakes.ollama_server import FakeOllama

ALICE, BOB, STRANGER = 1001, 1002, 9999
# How the bot takes updates: the key tests run in both (``@pytest.mark.parametrize("mode",
# MODES)`` overrides the ``mode`` fixture); the others poll.
MODES = ("polling", "webhook")


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    """The project's Telegram Bot API stand-in, served from a thread of this process."""
    emu = Emulator()
    yield emu
    emu.stop()


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    """A fake Ollama that lists the default chat model."""
    server = FakeOllama()
    yield server
    server.stop()


@pytest.fixture
def mode() -> str:
    """Long polling, unless a test is parametrized over :data:`MODES`."""
    return "polling"


@pytest.fixture
def start_bot(
    emulator: Emulator, ollama: FakeOllama, tmp_path: Path, mode: str
) -> Iterator[Callable[..., BotProcess]]:
    """Start the real bot process (callable, so a test can restart it on the same data).

    Keyword arguments are extra environment variables, e.g. a test's shorter timings. In
    ``webhook`` mode every start listens on the same port, which the stand-in posts to.
    """
    emulator.reset()
    started: list[BotProcess] = []
    data_dir = tmp_path / "botmemory"
    hook = webhook_env(free_port()) if mode == "webhook" else {}

    def start(**extra_env: str) -> BotProcess:
        env = bot_env(emulator, ollama.url, data_dir, f"{ALICE},{BOB}") | hook
        bot = BotProcess({**env, **extra_env})
        bot.start()
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.kill()
