"""Item 11 through the real bot process: a small model breaks memory_save, "記住" still works.

For each way a local model breaks tool calling (no call, the call as ```json text, arguments
with other names) the user still gets the proposal with its buttons, never sees the JSON,
is never told it was saved, and nothing reaches MEMORY.md before their own button press.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent.prompt import turn_message
from tests.e2e.conftest import ALICE
from tests.e2e.harness import BotProcess, Emulator, User
from tests.e2e.test_conversation import button, memory_md, proposal_message, wait_until
from tests.fakes.ollama_server import BROKEN_MODES, FakeOllama, tool_reply

FACT = "我對花生過敏，吃到會呼吸困難"
CLAIM = "好的，已經幫你記住了！"


def small_model(request: dict[str, Any]) -> Any:
    """Calls memory_save when asked to remember (the fake then breaks it), then claims a save."""
    messages = request.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return CLAIM
    text = turn_message(str(messages[-1].get("content", ""))) if messages else ""
    if "記住：" in text:
        return tool_reply("memory_save", text=text.split("記住：", 1)[1].strip())
    return "好的。"


@pytest.mark.parametrize("mode", sorted(BROKEN_MODES))
def test_a_broken_small_model_still_proposes_and_only_the_button_saves(
    emulator: Emulator,
    ollama: FakeOllama,
    start_bot: Callable[[], BotProcess],
    tmp_path: Path,
    mode: str,
) -> None:
    ollama.chat_handler = small_model
    ollama.tool_mode = mode
    bot, alice, data = start_bot(), User(emulator, ALICE, "Alice"), tmp_path / "botmemory"

    alice.send(f"記住：{FACT}")
    shown = proposal_message(alice, FACT)
    answer = alice.wait_text("好的", timeout=30)
    text = answer.get("text") or ""
    assert "確認" in text and "還沒有儲存" in text  # the claim is corrected in the same reply
    said = [m.get("text") or "" for m in alice.drain(0.5) + alice.inbox]
    assert not any("```" in t or "memory_save" in t or '"arguments"' in t for t in said)
    assert FACT not in memory_md(data, ALICE)  # pending is not memory

    alice.press(shown, button(shown, "c"))  # the user's own act writes it
    wait_until(lambda: FACT in memory_md(data, ALICE))
    assert memory_md(data, ALICE).count(FACT) == 1
    assert bot.terminate() == 0
