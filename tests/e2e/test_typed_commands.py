"""/remember and /remind typed by the user, through the real bot process and the Telegram
stand-in: done at once, with ↩️ Undo; Undo takes them back; the model's proposals still wait.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.conftest import ALICE
from tests.e2e.harness import BotProcess, Emulator, User
from tests.e2e.test_conversation import memory_md, proposal_message, wait_until
from tests.e2e.test_reminders import buttons, rows
from tests.fakes.ollama_server import FakeOllama, tool_reply

WORD = "quincewort"  # the distinctive word of the memory Alice takes back
SWIM = "我每週三晚上去游泳"


def proposing_model(request: dict[str, Any]) -> Any:
    """Proposes the swimming when asked in chat; once the tool answered, asks to confirm."""
    if request["messages"][-1]["role"] == "tool":
        return "要記住嗎？確認後才會儲存。"
    return tool_reply("memory_save", text=SWIM)


def with_undo(user: User, needle: str) -> dict[str, Any]:
    """The bot's message holding ``needle`` with the ↩️ Undo button under it."""
    return user.wait_for(
        lambda m: (
            needle in (m.get("text") or "")
            and buttons(m)[:1] != []
            and buttons(m)[0].startswith("ud:")
        ),
        timeout=30,
    )


def edits(emulator: Emulator) -> list[tuple[int, str]]:
    """(message id, new text) of every message the bot edited."""
    calls = emulator.call("getBotCalls", {"method": "editMessageText"})["result"]
    return [(int(c["params"]["message_id"]), str(c["params"]["text"])) for c in calls]


def holding(data: Path, needle: str) -> list[Path]:
    """Every file of the data folder whose bytes hold ``needle``."""
    return [p for p in data.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_typed_commands_are_done_at_once_and_undo_takes_them_back(
    emulator: Emulator,
    ollama: FakeOllama,
    start_bot: Callable[[], BotProcess],
    tmp_path: Path,
) -> None:
    ollama.chat_handler = proposing_model
    bot, alice, data = start_bot(), User(emulator, ALICE, "Alice"), tmp_path / "botmemory"

    alice.send(f"/remember 奶奶的燉菜要加 {WORD} 和煙燻紅椒粉")
    saved = with_undo(alice, WORD)
    assert saved["text"].startswith("✅ 已記住") and WORD in memory_md(data, ALICE)
    [data_undo] = buttons(saved)
    assert data_undo.startswith("ud:memory:m-")
    alice.press(saved, data_undo)
    wait_until(lambda: WORD not in memory_md(data, ALICE))
    wait_until(lambda: len(edits(emulator)) == 1)
    [(mid, said)] = edits(emulator)  # the message that said it was saved now says undone
    assert mid == saved["message_id"] and said.startswith("↩️ 已復原") and WORD not in said

    alice.send("/remember 我的密碼是 hunter2-Secret!")
    alice.wait_text("敏感資料一律不儲存", timeout=30)

    alice.send(f"記住：{SWIM}")  # the model proposes it: it waits for Alice's answer
    shown = proposal_message(alice, SWIM)
    assert any(b.startswith("pm:c:") for b in buttons(shown))
    assert SWIM not in memory_md(data, ALICE)

    alice.send("/remind 明天早上九點 打電話給媽媽")
    reminder = with_undo(alice, "打電話給媽媽")
    assert reminder["text"].startswith("✅ 已設定")
    [(rid, status)] = [(r["id"], r["status"]) for r in rows(data)]
    assert status == "scheduled" and buttons(reminder) == [f"ud:reminder:{rid}"]
    alice.press(reminder, f"ud:reminder:{rid}")
    wait_until(lambda: [r["status"] for r in rows(data)] == ["cancelled"])
    wait_until(lambda: len(edits(emulator)) == 2)
    assert edits(emulator)[-1] == (
        reminder["message_id"],
        f"↩️ 已復原：提醒 #{rid}（打電話給媽媽）已取消。",
    )

    assert bot.terminate() == 0
    assert SWIM not in memory_md(data, ALICE)  # still waiting, never written
    assert holding(data, WORD) == [] and holding(data, "hunter2") == []  # no copy anywhere
    conn = sqlite3.connect(data / "pcai.db")
    try:
        assert conn.execute("SELECT count(*) FROM forget_undo").fetchone() == (0,)
    finally:
        conn.close()
