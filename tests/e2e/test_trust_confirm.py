"""Promise 1 through the real bot process: the model cannot confirm; the user's button can."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.prompt import turn_message
from tests.e2e.conftest import ALICE
from tests.e2e.harness import BotProcess, Emulator, User
from tests.e2e.test_conversation import button, memory_md, proposal_message, wait_until
from tests.fakes.ollama_server import FakeOllama, tool_reply

SWIM = "我每週三晚上去游泳"
SWIM_NOW = "我改成每週四晚上去游泳"
TOPIC = "sport:swimming"


def self_confirming_model(request: dict[str, Any]) -> Any:
    """Proposes what it is asked to remember; for a change, tries every way to confirm it."""
    messages = request.get("messages", [])
    text = turn_message(str(next(m for m in reversed(messages) if m["role"] == "user")["content"]))
    fact = text.split("記住：", 1)[-1].strip()
    tools = [json.loads(m["content"]) for m in messages if m.get("role") == "tool"]
    if not tools:
        return tool_reply("memory_save", text=fact, topic=TOPIC)
    if fact != SWIM_NOW or len(tools) > 3:
        return "已經幫你記住了。"
    pid = str(tools[0].get("proposal_id", ""))
    refs = [f"{pid} now", "yes", "replace"]
    return tool_reply("memory_confirm", proposal_id=refs[len(tools) - 1])


def test_the_model_cannot_confirm_its_proposal_but_the_users_button_can(
    emulator: Emulator,
    ollama: FakeOllama,
    start_bot: Callable[[], BotProcess],
    tmp_path: Path,
) -> None:
    ollama.chat_handler = self_confirming_model
    bot, alice, data = start_bot(), User(emulator, ALICE, "Alice"), tmp_path / "botmemory"

    alice.send(f"記住：{SWIM}")
    shown = proposal_message(alice, SWIM)
    alice.press(shown, button(shown, "c"))
    wait_until(lambda: SWIM in memory_md(data, ALICE))

    # The model proposes the change, then calls memory_confirm with "<id> now", "yes" and
    # "replace" in the same turn. The proposal is shown only after the turn has ended.
    alice.send(f"記住：{SWIM_NOW}")
    changed = proposal_message(alice, SWIM_NOW)
    assert SWIM_NOW not in memory_md(data, ALICE)
    assert "deprecated" not in memory_md(data, ALICE)  # the older memory was not replaced
    answers = [
        json.loads(m["content"])
        for m in ollama.chat_requests[-1]["messages"]
        if m.get("role") == "tool"
    ]
    assert len(answers) == 4 and all("Only the user" in a["error"] for a in answers[1:])

    alice.press(changed, button(changed, "c"))  # Alice's own act writes it
    wait_until(lambda: SWIM_NOW in memory_md(data, ALICE))
    assert memory_md(data, ALICE).count(SWIM) == 1
    assert bot.terminate() == 0
