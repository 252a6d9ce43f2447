"""Every button press is answered exactly once, whatever its callback data says.

Telegram keeps a spinner on the pressed button until the bot answers the callback query. A
client can send any callback data (up to 64 bytes) under any message: data the bot never made,
cut short, naming someone else's memory or reminder, in other scripts. Each press gets one
``answerCallbackQuery`` from the real bot process, and nothing of anyone's changes. On the old
code most of these presses were never answered.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.conftest import ALICE, BOB
from tests.e2e.harness import TOKEN, BotProcess, Emulator, User
from tests.e2e.test_conversation import button, memory_md, proposal_message, scripted_model
from tests.fakes.ollama_server import FakeOllama

BOB_TEA = "我最喜歡的茶是凍頂烏龍"
BOB_HOME = "我住在台中市西屯區"


def _press(emulator: Emulator, user: User, message_id: int, data: str) -> str:
    """``user`` presses a button with ``data`` under bot message ``message_id``; the query id."""
    got = emulator.call(
        "sendCallback",
        {
            "botToken": TOKEN,
            "from": {"id": user.id, "is_bot": False, "first_name": user.name},
            "date": int(time.time()),
            "data": data,
            "message": {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": {"id": user.id, "type": "private", "first_name": user.name},
                "text": "",
            },
        },
    )
    return str(got["result"]["id"])


def _answered_within(emulator: Emulator, ids: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(_answers(emulator)[i] for i in ids):
        time.sleep(0.05)


def _answers(emulator: Emulator) -> Counter[str]:
    calls = emulator.call("getBotCalls", {"method": "answerCallbackQuery"})["result"]
    return Counter(str(c["params"]["callback_query_id"]) for c in calls)


def _bobs_things(emulator: Emulator, bob: User) -> tuple[str, str, str]:
    """Bob's proposal id, a memory id of his and a reminder id of his, from his buttons."""
    bob.send(f"記住：{BOB_TEA}")
    proposal = button(proposal_message(bob, BOB_TEA), "c").split(":", 2)[2]
    bob.send(f"/remember {BOB_HOME}")
    remembered = bob.wait_for(lambda m: BOB_HOME in (m.get("text") or "") and _data(m), 30)
    memory = next(d for d in _data(remembered) if d.startswith("ud:memory:"))
    bob.send("/remind in 2 hours water the plants")
    reminded = bob.wait_for(lambda m: "water the plants" in (m.get("text") or ""), 30)
    reminder = next(d for d in _data(reminded) if d.startswith("ud:reminder:"))
    return proposal, memory.removeprefix("ud:memory:"), reminder.removeprefix("ud:reminder:")


def _data(message: dict[str, Any]) -> list[str]:
    markup = message.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    rows = markup.get("inline_keyboard") or [] if isinstance(markup, dict) else []
    return [str(b.get("callback_data")) for row in rows for b in row]


def test_every_crafted_press_is_answered_exactly_once(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess], tmp_path: Path
) -> None:
    ollama.chat_handler = scripted_model
    start_bot()
    alice, bob = User(emulator, ALICE, "Alice"), User(emulator, BOB, "Bob")
    proposal, memory, reminder = _bobs_things(emulator, bob)
    hers = alice.send("/help")
    under = alice.wait_for(lambda m: bool(m.get("text")), 30)["message_id"]

    crafted = [
        "zz:1",  # a prefix the bot never made
        "hello",
        "pm",  # cut short
        "pm:",
        "pm:c",
        "pm:c:",
        "pm:c:p-does-not-exist",
        "pm:q:x",  # an unknown code
        f"pm:c:{proposal}",  # Bob's proposal, pressed by Alice
        f"pm:e:{proposal}",
        "mm:",
        "mm:d:no-such-memory",
        f"mm:d:{memory}",  # Bob's memory
        f"mm:k:{memory}",
        "mm:??:x",
        "ud:",
        "ud:memory:no-such-memory",
        f"ud:memory:{memory}",  # Bob's undo
        f"ud:reminder:{reminder}",
        "ud:zz",
        "rm:",
        "rm:c:²",  # digits that int() would read
        "rm:x:١",
        f"rm:x:{reminder}",  # Bob's reminder
        f"rm:10m:{reminder}",
        "rm:b:no-such-memory",
        "rm:k:99999999999999999999999",
        "確認:一",  # another script
        "\u202erm:c:1",
        "pm:c:" + "x" * 59,  # 64 bytes, the most Telegram carries
        "rm:tm:" + "9" * 58,
    ]
    assert max(len(d.encode()) for d in crafted) == 64
    presses = [(data, under) for data in crafted]
    presses += [("pm:c:x", 987_654), ("mm:d:x", hers["message_id"])]  # no message; hers
    ids = {}
    for data, message_id in presses:  # one at a time: each reaches its handler
        ids[data, message_id] = query = _press(emulator, alice, message_id, data)
        _answered_within(emulator, [query], 10)
    # A burst past the per-user bound of waiting updates: the skipped ones are answered too.
    burst = [_press(emulator, alice, under, f"rm:k:{n}") for n in range(12)]
    _answered_within(emulator, burst, 30)
    time.sleep(1.0)  # a second answer would come now
    answered = _answers(emulator)
    unanswered = [d for d, i in ids.items() if answered[i] == 0]
    twice = [d for d, i in ids.items() if answered[i] > 1]
    assert (unanswered, twice) == ([], []), f"{len(unanswered)} of {len(ids)} unanswered"
    assert [answered[i] for i in burst] == [1] * len(burst)

    # Nothing of Bob's changed: his memory, his reminder and his proposal are all still there.
    data = tmp_path / "botmemory"
    assert BOB_HOME in memory_md(data, BOB) and BOB_TEA not in memory_md(data, BOB)
    reply = bob.wait_for(lambda m: "water the plants" in (m.get("text") or ""), 5)
    assert reply  # his reminder's message is unchanged in his chat
    bob.send("/reminders")
    bob.wait_text("water the plants", timeout=30)
