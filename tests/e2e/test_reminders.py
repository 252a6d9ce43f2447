"""Reminders through the real bot process, the Telegram stand-in and a fake Ollama.

Alice asks in chat; the fake model calls ``reminder_create`` with a time a few seconds ahead;
she confirms with the button; the reminder arrives at its time with Done / Snooze buttons;
she presses Snooze (``PCAI_REMINDERS_SNOOZE_MINUTES=0.05``: three seconds, labelled so) and
it arrives again, with its buttons; a second snooze (an hour) shows in ``/reminders``. A
stranger's ``/remind`` stores nothing.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.e2e.conftest import ALICE, STRANGER
from tests.e2e.harness import BotProcess, Emulator, User
from tests.e2e.test_conversation import wait_until
from tests.fakes.ollama_server import FakeOllama, tool_reply

LEAD = 8.0  # seconds between the model's call and the reminder's time


def reminding_model(request: dict[str, Any]) -> Any:
    """Calls reminder_create for "in a few seconds" (computed when asked), then answers."""
    messages = request.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return "好的，請按確認。"
    due = datetime.now(UTC) + timedelta(seconds=LEAD)
    return tool_reply("reminder_create", when=due.isoformat(), text="喝水")


def buttons(message: dict[str, Any]) -> list[str]:
    """The callback data of every inline button under ``message``."""
    markup = message.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row]


def labels(message: dict[str, Any]) -> list[str]:
    """The text of every inline button under ``message``."""
    markup = message.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [b["text"] for row in markup.get("inline_keyboard", []) for b in row]


def rows(data: Path, sql: str = "SELECT * FROM reminders") -> list[sqlite3.Row]:
    """Rows of pcai.db, read beside the running bot (WAL lets a reader in)."""
    conn = sqlite3.connect(data / "pcai.db", timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        return list(conn.execute(sql))
    finally:
        conn.close()


def test_chat_confirm_ring_snooze_ring_again_and_a_stranger_stores_nothing(
    emulator: Emulator,
    ollama: FakeOllama,
    start_bot: Callable[..., BotProcess],
    tmp_path: Path,
) -> None:
    ollama.chat_handler = reminding_model
    bot = start_bot(PCAI_REMINDERS_SNOOZE_MINUTES="0.05")
    alice, data = User(emulator, ALICE, "Alice"), tmp_path / "botmemory"

    alice.send("幾秒後提醒我喝水")
    proposal = alice.wait_for(
        lambda m: "要設定這個提醒嗎" in (m.get("text") or "") and bool(buttons(m)), timeout=30
    )
    confirm, discard = buttons(proposal)
    assert confirm.startswith("rm:c:") and discard.startswith("rm:d:")
    rid = int(confirm.rsplit(":", 1)[1])
    [row] = rows(data)
    assert (row["id"], row["status"]) == (rid, "proposed")
    assert re.fullmatch(r"tool:\d+", row["source"])  # the model's, named by its message
    assert row["user_key"] == f"telegram_{ALICE}" and row["text"] == "喝水"

    alice.press(proposal, confirm)
    wait_until(lambda: rows(data)[0]["status"] == "scheduled")
    due = datetime.fromisoformat(rows(data)[0]["due_utc"])
    alert = alice.wait_for(lambda m: "⏰ 提醒：喝水" in (m.get("text") or ""), timeout=40)
    arrived = datetime.now(UTC)
    assert timedelta(0) <= arrived - due < timedelta(seconds=10)  # at its time, not before
    ringing = [f"rm:k:{rid}", f"rm:10m:{rid}", f"rm:1h:{rid}", f"rm:tm:{rid}"]
    assert buttons(alert) == ringing
    assert labels(alert)[1] == "💤 3 秒"  # the configured short snooze, in Alice's language
    wait_until(lambda: rows(data)[0]["status"] == "sent")

    pressed = datetime.now(UTC)
    alice.press(alert, f"rm:10m:{rid}")
    wait_until(lambda: rows(data)[0]["snooze_count"] == 1)
    moved = datetime.fromisoformat(rows(data)[0]["due_utc"])
    assert timedelta(seconds=3) <= moved - pressed < timedelta(seconds=10)
    again = alice.wait_for(
        lambda m: (
            m["message_id"] != alert["message_id"] and "⏰ 提醒：喝水" in (m.get("text") or "")
        ),
        timeout=40,
    )
    arrived = datetime.now(UTC)
    assert timedelta(0) <= arrived - moved < timedelta(seconds=10)  # at the snoozed time
    assert buttons(again) == ringing
    wait_until(lambda: rows(data)[0]["status"] == "sent")
    assert rows(data)[0]["snooze_count"] == 1

    alice.press(again, f"rm:1h:{rid}")
    wait_until(lambda: rows(data)[0]["snooze_count"] == 2)
    assert rows(data)[0]["status"] == "scheduled"
    alice.send("/reminders")
    listing = alice.wait_for(lambda m: (m.get("text") or "").startswith("你的提醒："))
    assert f"#{rid} " in listing["text"] and "喝水" in listing["text"]
    assert buttons(listing) == [f"rm:x:{rid}"]
    alerts = [m for m in alice.inbox if "⏰ 提醒：喝水" in (m.get("text") or "")]
    assert [m["message_id"] for m in alerts] == [alert["message_id"], again["message_id"]]

    stranger = User(emulator, STRANGER, "Mallory")
    stranger.send("/remind 明天早上九點 把資料給我")
    refusal = stranger.wait_for(lambda m: bool(m.get("text")))
    assert "only serves its owner" in refusal["text"] or "抱歉" in refusal["text"]
    assert bot.terminate() == 0
    assert rows(data, f"SELECT * FROM reminders WHERE user_key = 'telegram_{STRANGER}'") == []
    assert len(rows(data)) == 1
