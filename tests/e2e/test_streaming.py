"""The real bot process streams a private reply as drafts, then sends it whole and masked."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.e2e.conftest import ALICE
from tests.e2e.harness import BotProcess, Emulator, User
from tests.fakes.ollama_server import FakeOllama

SAID = "my wifi password is hunter2-XYZ and the router sits in the hall cupboard"
ANSWER = (
    "Noted: the router sits in the hall cupboard, next to the fuse box. "
    "Your wifi password is hunter2-XYZ, so I will not keep that one. "
    "If you move the router, tell me and I will propose the new place for you to confirm."
)
WORDS = "好的，我先把路由器的位置記下來，等你按下確認之後才會真的保存，密碼不會記。\n"
CALL = json.dumps({"name": "memory_save", "arguments": {"text": "router: hall cupboard"}})


def model(request: dict[str, Any]) -> Any:
    """First a call written as JSON after some words (a small model), then the answer."""
    if any(m.get("role") == "tool" for m in request["messages"]):
        return ANSWER
    return WORDS + CALL


def test_drafts_come_before_the_whole_masked_reply(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> None:
    ollama.chat_handler = model
    start_bot()
    alice = User(emulator, ALICE, "Alice")
    alice.send(SAID)
    final = alice.wait_text("fuse box", timeout=60)
    calls = emulator.call("getBotCalls", {})["result"]
    drafts = [c for c in calls if c["method"].lower() == "sendmessagedraft"]
    sent = [
        c
        for c in calls
        if c["method"].lower() == "sendmessage" and "fuse box" in c["params"].get("text", "")
    ]
    assert drafts and sent
    assert max(c["seq"] for c in drafts) < sent[0]["seq"]  # drafts first, then the message
    whole = str(final["text"])
    assert "hunter2" not in whole and "[REDACTED]" in whole  # the final message is masked
    assert whole.startswith("Noted: the router sits in the hall cupboard")
    for draft in drafts:
        text = str(draft["params"].get("text") or "")
        assert draft["params"]["chat_id"] == ALICE
        assert "{" not in text and "memory_save" not in text and "hunter" not in text
        # the round with the call showed its words (then "Thinking…"), the answer its start
        assert not text or whole.startswith(text) or WORDS.startswith(text)
