"""One user's flood or hostile input never holds up another user (the real bot process).

Bob's reply time is measured twice in the same run: alone (the baseline) and right after
Alice sent 300 messages, or a hostile ``/remind`` and a 4 KB pathological message. The bound
is a termination check (10 s; the old shared pool of 256 slots made Bob wait 17.7 s behind a
flood), not a speed figure; the figures themselves are printed.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.e2e.conftest import ALICE, BOB, MODES
from tests.e2e.harness import BotProcess, Emulator, User
from tests.e2e.test_conversation import wait_until
from tests.fakes.ollama_server import FakeOllama

BOUND = 10.0  # seconds: a termination check, far above a normal turn here
HOSTILE_REMIND = "/remind 1" + " " * 100 + "分" + " " * 100 + "x"


def slow_model(body: dict[str, Any]) -> str:
    """A model that takes a little while, as real ones do, and echoes who it answers."""
    time.sleep(0.2)
    last = str(body.get("messages", [{}])[-1].get("content", ""))
    found = re.search(r"Bob here, question (\d+)", last)
    return f"bob-reply {found.group(1)}" if found else "好的。"


def bob_turn(bob: User, n: int) -> float:
    """Seconds from Bob's message to his reply."""
    began = time.monotonic()
    bob.send(f"Bob here, question {n}")
    bob.wait_for(lambda m: m.get("text") == f"bob-reply {n}", timeout=60)
    return time.monotonic() - began


def pathological_4k() -> str:
    """4 KB of what regexes hate: long runs of (full-width) spaces, punctuation, CJK, digits."""
    parts = [
        " " * 300,
        "：" * 200,
        "密碼是" + "-" * 300,
        "\u3000" * 300,
        "分" * 200 + "1" * 200,
        "…" * 200 + "!?" * 150,
        "## " + " " * 400 + "#",
        "token" + " " * 300 + "=",
    ]
    return "".join(parts * 3)[:4096]


def _bob_timed_alone(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> tuple[BotProcess, User, User, float]:
    """The bot on the slow model, Alice and Bob, and how long Bob's turn takes alone."""
    ollama.chat_handler = slow_model
    bot = start_bot()
    alice, bob = User(emulator, ALICE, "Alice"), User(emulator, BOB, "Bob")
    return bot, alice, bob, bob_turn(bob, 0)


def _stop_promptly(bot: BotProcess) -> float:
    began = time.monotonic()
    assert bot.terminate(timeout=60) == 0
    return time.monotonic() - began


@pytest.mark.parametrize("mode", MODES)
def test_a_flood_of_300_messages_does_not_hold_up_another_user(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> None:
    bot, alice, bob, baseline = _bob_timed_alone(emulator, ollama, start_bot)
    asked_before = len(ollama.chat_requests)

    with ThreadPoolExecutor(8) as pool:  # as fast as a client can send them
        list(pool.map(lambda n: alice.send(f"flood {n} 快速訊息"), range(300)))
    during = bob_turn(bob, 1)
    print(f"fairness: bob alone {baseline:.2f} s, behind a 300-message flood {during:.2f} s")
    assert during < BOUND

    # Alice is answered too, in a bounded number of turns, and none of her messages is lost.
    def asked() -> str:
        return json.dumps(ollama.chat_requests[asked_before:], ensure_ascii=False)

    wait_until(lambda: all(f"flood {n} " in asked() for n in range(300)), timeout=120)
    alice_turns = [r for r in ollama.chat_requests[asked_before:] if "flood" in str(r)]
    assert len(alice_turns) <= 10
    assert _stop_promptly(bot) < 8.0


def test_hostile_input_from_one_user_stops_nobody_and_not_the_stop(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> None:
    bot, alice, bob, baseline = _bob_timed_alone(emulator, ollama, start_bot)

    alice.send(HOSTILE_REMIND)
    alice.send(pathological_4k())
    during = bob_turn(bob, 1)
    print(f"hostile: bob alone {baseline:.2f} s, beside the hostile input {during:.2f} s")
    assert during < BOUND

    # Alice gets an answer to each (one sentence for a /remind it cannot read is fine).
    def answered() -> int:
        alice.drain(0.3)
        return len(alice.inbox)

    wait_until(lambda: answered() >= 2, timeout=60)

    alice.send(HOSTILE_REMIND)  # and once more, with SIGTERM right behind it
    alice.send(pathological_4k())
    time.sleep(0.5)
    stopped = _stop_promptly(bot)
    print(f"hostile: SIGTERM exited in {stopped:.2f} s")
    assert stopped < 8.0
