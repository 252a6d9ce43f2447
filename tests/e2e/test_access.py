"""Strangers: one polite refusal, nothing stored about them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.e2e.conftest import ALICE, STRANGER
from tests.e2e.harness import BotProcess, Emulator, User


def test_stranger_is_refused_and_leaves_no_file(
    emulator: Emulator, start_bot: Callable[[], BotProcess], tmp_path: Path
) -> None:
    bot = start_bot()
    stranger = User(emulator, STRANGER, "Mallory")
    stranger.send("hello, remember my card 4111 1111 1111 1111")
    refusal = stranger.wait_for(lambda m: bool(m.get("text")))
    assert "not" in refusal["text"].lower() or "抱歉" in refusal["text"]

    # An allowed user in the same run is served, so the refusal was about access.
    alice = User(emulator, ALICE, "Alice")
    alice.send("/help")
    alice.wait_for(lambda m: "/remember" in (m.get("text") or ""))

    assert bot.terminate() == 0
    data = tmp_path / "botmemory"
    leftovers = [p for p in data.rglob("*") if str(STRANGER) in p.name or str(STRANGER) in str(p)]
    assert leftovers == []
    for path in data.rglob("*"):
        if path.is_file() and path.suffix in (".md", ".json"):
            assert "4111" not in path.read_text(encoding="utf-8")
