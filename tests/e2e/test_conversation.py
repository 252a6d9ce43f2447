"""Users talk to the real bot process through the emulator; the model is a fake Ollama."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent.prompt import turn_message
from tests.e2e.conftest import ALICE, BOB, MODES
from tests.e2e.harness import BotProcess, Emulator, User
from tests.fakes.ollama_server import FakeOllama, tool_reply

TEA = "我最喜歡的茶是凍頂烏龍"
HOME = "我住在台中市西屯區"


def scripted_model(request: dict[str, Any]) -> Any:
    """A model that proposes a memory when asked to remember, else answers plainly."""
    messages = request.get("messages", [])
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    text = turn_message(str(last_user.get("content", "")))
    if messages and messages[-1].get("role") == "tool":
        return "已暫存，請按確認。"
    if "記住：" in text:
        return tool_reply("memory_save", text=text.split("記住：", 1)[1].strip())
    if "長文" in text:
        return "\n\n".join(f"第 {i} 段。" + "內容" * 250 for i in range(20))
    return "好的。"


def prompt_text(request: dict[str, Any]) -> str:
    """Everything the model was shown in one chat request."""
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []))


def proposal_message(user: User, needle: str) -> dict[str, Any]:
    """Wait for the proposal message that carries inline buttons and ``needle``."""
    return user.wait_for(
        lambda m: needle in (m.get("text") or "") and bool(m.get("reply_markup")), timeout=30
    )


def button(message: dict[str, Any], code: str) -> str:
    """The callback data of the button with ``code`` (c confirm, e edit, d discard)."""
    markup = message["reply_markup"]
    if isinstance(markup, str):
        markup = json.loads(markup)
    for row in markup["inline_keyboard"]:
        for btn in row:
            if btn["callback_data"].startswith(f"pm:{code}:"):
                return str(btn["callback_data"])
    raise AssertionError(f"no {code} button in {markup}")


def memory_md(data: Path, user_id: int) -> str:
    path = data / "users" / f"telegram_{user_id}" / "MEMORY.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def next_reply(user: User, text: str, timeout: float = 30) -> str:
    """Send ``text`` and return the text of the bot's next message in that chat."""
    user.drain(0.2)  # whatever was already on its way is not the answer
    seen = {id(m) for m in user.inbox}
    user.send(text)
    got = user.wait_for(lambda m: id(m) not in seen and bool(m.get("text")), timeout=timeout)
    return str(got["text"])


def wait_until(cond: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


@dataclass
class Scene:
    """The bot running against the scripted model, Alice, and the bot's data folder."""

    bot: BotProcess
    alice: User
    data: Path


@pytest.fixture
def scene(
    emulator: Emulator,
    ollama: FakeOllama,
    start_bot: Callable[[], BotProcess],
    tmp_path: Path,
) -> Scene:
    """Start the bot with the scripted model; Alice is ready to talk."""
    ollama.chat_handler = scripted_model
    return Scene(start_bot(), User(emulator, ALICE, "Alice"), tmp_path / "botmemory")


@pytest.mark.parametrize("mode", MODES)
def test_confirm_by_button_and_reply_then_recall_in_a_new_session(
    emulator: Emulator, ollama: FakeOllama, scene: Scene
) -> None:
    bot, alice, data = scene.bot, scene.alice, scene.data

    # 1. The model proposes a memory; Alice confirms it with the button.
    alice.send(f"記住：{TEA}")
    shown = proposal_message(alice, TEA)
    assert memory_md(data, ALICE).count(TEA) == 0  # pending is not memory
    alice.press(shown, button(shown, "c"))
    wait_until(lambda: TEA in memory_md(data, ALICE))

    # 2. Another proposal, confirmed by replying 確認 to it.
    alice.send(f"記住：{HOME}")
    shown = proposal_message(alice, HOME)
    alice.send("確認", reply_to=shown)
    wait_until(lambda: HOME in memory_md(data, ALICE))
    assert memory_md(data, ALICE).count(TEA) == 1

    # 3. A fresh session later still gets the memory in its prompt.
    alice.send("/new")
    alice.wait_text("已開始新的對話", timeout=30)  # she writes Chinese: one language, hers
    full = data / "users" / f"telegram_{ALICE}" / "MEMORY_FULL.md"
    assert "## 對話摘要" in full.read_text(encoding="utf-8")
    session = json.loads((data / "history" / f"telegram_{ALICE}.json").read_text("utf-8"))
    assert session["messages"] == []
    before = len(ollama.chat_requests)
    alice.send("我最喜歡喝什麼茶？")
    alice.wait_text("好的", timeout=30)
    asked = ollama.chat_requests[before:]
    assert any(TEA in prompt_text(r) for r in asked)
    # Search brought it, not the static fallback (which would show every memory): /why names
    # the layer each injected memory came from, and the tea memory came from L2.
    why = next_reply(alice, "/why")
    assert any(line.startswith("[L2 ") and TEA in line for line in why.splitlines()), why
    assert "[fallback" not in why

    # 4. Bob shares the bot but never sees Alice's memories.
    bob = User(emulator, BOB, "Bob")
    before = len(ollama.chat_requests)
    bob.send("我最喜歡喝什麼茶？我住在哪裡？")
    bob.wait_text("好的", timeout=30)
    for request in ollama.chat_requests[before:]:
        assert TEA not in prompt_text(request) and HOME not in prompt_text(request)
    assert next_reply(bob, "/search 烏龍") == "找不到相關記憶。"  # nothing found
    assert next_reply(bob, "/memory").startswith("還沒有記憶。")  # no memories yet
    assert memory_md(data, BOB) == ""
    assert bot.terminate() == 0


def test_a_long_reply_arrives_in_pieces(scene: Scene) -> None:
    expected = scripted_model({"messages": [{"role": "user", "content": "長文"}]})
    assert len(expected) > 10_000
    bot, alice = scene.bot, scene.alice
    alice.send("請寫一篇長文給我")
    alice.wait_text("第 19 段", timeout=30)
    pieces = [m["text"] for m in alice.inbox if "段。" in (m.get("text") or "")]
    assert len(pieces) >= 3
    assert all(len(p) <= 4096 for p in pieces)
    assert "".join(pieces).replace("\n", "") == expected.replace("\n", "")
    assert bot.terminate() == 0


@pytest.mark.parametrize("mode", MODES)
def test_sigterm_during_a_conversation_loses_nothing(
    ollama: FakeOllama, scene: Scene, start_bot: Callable[[], BotProcess]
) -> None:
    bot, alice, data = scene.bot, scene.alice, scene.data
    alice.send("今天先聊到這裡，明天繼續討論旅行計畫")
    alice.wait_text("好的", timeout=30)

    ollama.delay = 5.0  # the next answer is still being written when SIGTERM arrives
    alice.send("對了，記得提醒我帶護照和充電器")
    wait_until(lambda: len(ollama.chat_requests) >= 2, timeout=20)
    began = time.monotonic()
    assert bot.terminate(timeout=60) == 0
    assert time.monotonic() - began < 8.0  # the turn in hand is cut, not waited out

    logs = "".join(
        p.read_text("utf-8") for p in (data / "users" / f"telegram_{ALICE}").glob("memory/*.md")
    )
    assert "帶護照和充電器" in logs
    # The cut turn stayed open in pcai.db: the next process answers it, once.
    ollama.delay = 0.0
    start_bot()

    def replies() -> list[dict[str, Any]]:
        alice.drain(0.3)
        return [m for m in alice.inbox if m.get("text") == "好的。"]

    wait_until(lambda: len(replies()) >= 2, 30)
    assert len(replies()) == 2
    session = json.loads((data / "history" / f"telegram_{ALICE}.json").read_text("utf-8"))
    said = [m["content"] for m in session["messages"] if m["role"] == "user"]
    assert "今天先聊到這裡，明天繼續討論旅行計畫" in said
    assert said.count("對了，記得提醒我帶護照和充電器") == 1  # kept once, answered once
    logs = "".join(
        p.read_text("utf-8") for p in (data / "users" / f"telegram_{ALICE}").glob("memory/*.md")
    )
    assert logs.count("帶護照和充電器") == 1
