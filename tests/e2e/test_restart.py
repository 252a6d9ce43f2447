"""A restart of the real bot process: proposals, their buttons and replies, and queued updates.

Alice gets two proposals, then the bot stops. While it is down she presses ✅ under the
first, replies 確認 to the second and asks a question; Telegram (the stand-in) keeps those
updates. The restarted process answers all three: the proposals and the message ids they were
shown in come back from pcai.db.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import ALICE, MODES
from tests.e2e.harness import BotProcess, Emulator, User
from tests.e2e.test_conversation import (
    button,
    memory_md,
    proposal_message,
    scripted_model,
    wait_until,
)
from tests.fakes.ollama_server import FakeOllama

TEA = "我最喜歡的茶是凍頂烏龍"
HOME = "我住在台中市西屯區"
QUESTION = "明天要不要帶傘？"


@pytest.mark.parametrize("mode", MODES)
def test_updates_sent_while_the_bot_was_down_are_answered_after_it_restarts(
    emulator: Emulator,
    ollama: FakeOllama,
    start_bot: Callable[[], BotProcess],
    tmp_path: Path,
) -> None:
    ollama.chat_handler = scripted_model
    data = tmp_path / "botmemory"
    first = start_bot()
    alice = User(emulator, ALICE, "Alice")
    alice.send(f"記住：{TEA}")
    tea = proposal_message(alice, TEA)
    alice.send(f"記住：{HOME}")
    home = proposal_message(alice, HOME)
    assert first.terminate() == 0
    assert memory_md(data, ALICE) == ""  # both still only proposals

    asked_before = len(ollama.chat_requests)
    alice.press(tea, button(tea, "c"))  # while no bot is polling
    alice.send("確認", reply_to=home)
    alice.send(QUESTION)
    alice.drain(0.5)
    assert len(ollama.chat_requests) == asked_before  # nobody has answered them yet

    start_bot()  # the same data dir, a new process
    wait_until(lambda: TEA in memory_md(data, ALICE) and HOME in memory_md(data, ALICE), 30)

    # Both proposal messages now say they were saved (in the order Alice answered them), and
    # the reply was also answered in the chat.
    def edits() -> list[tuple[int, bool]]:
        calls = emulator.call("getBotCalls", {"method": "editMessageText"})["result"]
        return [
            (int(c["params"]["message_id"]), c["params"]["text"].startswith("✅ 已記住"))
            for c in calls
        ]

    wait_until(lambda: len(edits()) >= 2, 30)
    assert edits() == [(tea["message_id"], True), (home["message_id"], True)]
    alice.wait_text(f"已記住：{HOME}", timeout=30)
    # The question reached the model once, after the restart, and its answer reached Alice.
    alice.wait_text("好的。", timeout=30)
    asked = [
        r
        for r in ollama.chat_requests[asked_before:]
        if QUESTION in json.dumps(r, ensure_ascii=False)
    ]
    assert len(asked) == 1
    text = memory_md(data, ALICE)
    assert text.count(TEA) == 1 and text.count(HOME) == 1
