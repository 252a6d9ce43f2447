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
    ollama.chunk_delay = 0.03  # written at a small machine's pace: the guard checks as it goes
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


PHRASE = (
    "vorpal gimble borogove mimsy frabjous tulgey uffish jubjub manxome slithy wabe "
    "bandersnatch outgrabe callooh tumtum beamish"
)


def test_no_draft_shows_a_pass_phrase_the_person_said(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> None:
    """Issue 28: the echo of a said pass-phrase longer than the hold-back showed in part."""
    ollama.chat_handler = lambda request: (
        f"Noted. {PHRASE}, and I will not keep it anywhere: secrets are never stored. "
        "The router sits in the hall cupboard, next to the fuse box, as you said."
    )
    ollama.chunk_delay = 0.05  # the phrase takes over a second: drafts go out meanwhile
    start_bot()
    alice = User(emulator, ALICE, "Alice")
    alice.send(f'my wifi password is "{PHRASE}"')
    final = str(alice.wait_text("fuse box", timeout=60)["text"])
    assert "vorpal" not in final and "[REDACTED]" in final
    calls = emulator.call("getBotCalls", {})["result"]
    drafts = [
        str(c["params"].get("text") or "")
        for c in calls
        if c["method"].lower() == "sendmessagedraft"
    ]
    assert any("Noted." in d for d in drafts)  # it did stream
    for draft in drafts:
        assert final.startswith(draft)
        assert not any(word in draft for word in PHRASE.split())
