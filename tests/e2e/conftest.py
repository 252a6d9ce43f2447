"""Fixtures for end-to-end tests: one Telegram stand-in per module, a fake Ollama, the bot."""

from __future__ import annotations

import time
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
        hooks_set = len(_calls(emulator, "setWebhook"))
        bot.start()
        started.append(bot)
        if hook:  # the test runs once the stand-in knows where to post
            deadline = time.monotonic() + 30
            while len(_calls(emulator, "setWebhook")) == hooks_set:
                assert time.monotonic() < deadline, "the bot never set its webhook"
                time.sleep(0.05)
        return bot

    yield start
    for bot in started:
        bot.kill()
    if hook:  # it really took every update from the webhook
        assert _calls(emulator, "getUpdates") == []


def _calls(emulator: Emulator, method: str) -> list[dict[str, object]]:
    """The bot's calls of ``method`` since the stand-in was reset."""
    return list(emulator.call("getBotCalls", {"method": method})["result"])
