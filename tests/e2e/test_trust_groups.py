"""Promise 4 end to end: a group turn of the real bot process never shows private history,
and an edited message never starts a second turn or re-runs a command.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ALICE, BOB
from tests.e2e.harness import BotProcess, Emulator, Group, User, bot_env
from tests.fakes.ollama_server import FakeOllama

GROUP = -1001234567
PLAN = "我的秘密計畫代號 PRIVATEPLAN 只跟你說"


class GroupMember(User):
    """A user talking in a group chat that the bot is a member of."""

    def __init__(self, emulator: Emulator, user_id: int, name: str, group_id: int) -> None:
        super().__init__(emulator, user_id, name)
        self.group_id = group_id

    @property
    def _chat(self) -> dict[str, Any]:
        return {"id": self.group_id, "type": "group", "title": "Friends"}

    def _poll(self) -> list[dict[str, Any]]:
        got = self.emu.call("getUpdates", {"token": "123456:TEST", "chatId": self.group_id})
        rows = (got.get("result", got) if isinstance(got, dict) else got) or []
        out = [dict(row.get("message", {})) for row in rows]
        self.inbox.extend(out)
        return out


def _prompt(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []))


@pytest.fixture
def bot(emulator: Emulator, ollama: FakeOllama, tmp_path: Path) -> Iterator[BotProcess]:
    """The real bot with groups on, answering every chat with a plain sentence."""
    emulator.reset()
    ollama.chat_handler = lambda request: "好的。"
    env = bot_env(emulator, ollama.url, tmp_path / "botmemory", f"{ALICE},{BOB}")
    env["PCAI_GROUPS"] = "true"
    process = BotProcess(env)
    process.start()
    yield process
    process.kill()


def test_a_group_turn_shows_no_private_history(
    emulator: Emulator, ollama: FakeOllama, bot: BotProcess, tmp_path: Path
) -> None:
    alice = User(emulator, ALICE, "Alice")
    alice.send(PLAN)
    alice.wait_text("好的", timeout=30)
    assert "PRIVATEPLAN" in _prompt(ollama.chat_requests[-1])

    in_group = GroupMember(emulator, ALICE, "Alice", GROUP)
    in_group.send("大家晚上吃什麼？")  # not addressed to the bot: no turn
    before = len(ollama.chat_requests)
    in_group.send("@TestNameBot 我的計畫代號是什麼？")
    in_group.wait_text("好的", timeout=30)

    [request] = ollama.chat_requests[before:]
    prompt = _prompt(request)
    assert "我的計畫代號是什麼" in prompt
    assert "PRIVATEPLAN" not in prompt and "大家晚上吃什麼" not in prompt
    assert not request.get("tools")
    assert bot.terminate() == 0

    data = tmp_path / "botmemory"
    group_session = json.loads(
        (data / "history" / f"telegram_group_{GROUP}.json").read_text(encoding="utf-8")
    )
    assert [m["content"] for m in group_session["messages"]] == ["我的計畫代號是什麼？", "好的。"]
    for path in (data / "users").rglob("*"):
        if path.is_file():
            assert "計畫代號是什麼" not in path.read_text(encoding="utf-8"), path


def test_an_edit_starts_no_second_turn_and_reruns_no_command(
    emulator: Emulator, ollama: FakeOllama, bot: BotProcess, tmp_path: Path
) -> None:
    alice = User(emulator, ALICE, "Alice")
    said = alice.send("我最近在學做義大利麵")
    alice.wait_text("好的", timeout=30)
    turns = len(ollama.chat_requests)
    remembered = alice.send("/remember 我的護照號碼放在書房抽屜")
    alice.wait_text("我的護照號碼放在書房抽屜", timeout=30)
    alice.drain()

    alice.edit(said, "我最近在學做日式咖哩")
    alice.edit(remembered, "/remember 我的鑰匙放在玄關")
    group = Group(emulator, GROUP)
    in_group = alice.send("大家好", group=group)
    alice.edit(in_group, "@TestNameBot 大家好")  # the edit adds the mention: still no turn
    alice.send("/memory")  # a marker: everything before it has been handled
    alice.wait_text("我的護照號碼放在書房抽屜", timeout=30)
    shown = [m.get("text") or "" for m in alice.inbox + alice.drain()]
    assert not any("鑰匙" in text for text in shown), shown
    assert len(ollama.chat_requests) == turns  # no model call for any edit
    assert group.drain() == []
    assert bot.terminate() == 0
    data = tmp_path / "botmemory"
    session = (data / "history" / f"telegram_{ALICE}.json").read_text(encoding="utf-8")
    assert "日式咖哩" not in session and "鑰匙" not in session
