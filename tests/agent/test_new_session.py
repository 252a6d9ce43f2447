"""/new: the old conversation is summarised into MEMORY_FULL.md, then the session starts empty."""

from __future__ import annotations

import json
from typing import Any

from memory.base.users import UserPaths
from tests.agent.conftest import USER, Env
from tests.fakes.chat_requests import instruction_of


def model(body: dict[str, Any]) -> str:
    """Chat turns get a short answer; a conversation-summary request gets bullets."""
    system = instruction_of(body)
    if "Summarise this conversation" in system:
        return "- **主題：** 台中出差\n- **待辦：** 訂高鐵票和旅館；預算一萬五千元"
    return "好的，我記下了。"


async def test_new_session_summarises_the_old_one_then_starts_empty(env: Env) -> None:
    env.fake.chat_handler = model
    for text in ("我們決定下週三去台中出差", "記得要訂高鐵票和旅館", "預算大約一萬五千元"):
        await env.agent.respond(env.msg(text))

    said = await env.agent.new_session(USER, env.clock, lang="zh")

    assert "對話摘要 (" in said and "MEMORY_FULL" not in said  # the summary, not a file name
    session = json.loads(env.agent.sessions.path(USER).read_text(encoding="utf-8"))
    assert session["messages"] == []
    full = UserPaths.of(env.services.settings.data_dir, USER).memory_full_md.read_text("utf-8")
    assert "## 對話摘要" in full and "台中" in full
    assert env.agent.why(USER) == ()

    # Nothing left to summarise: a second /new writes no second summary.
    again = await env.agent.new_session(USER, env.clock, lang="zh")
    assert "對話摘要" not in again
    assert full == UserPaths.of(env.services.settings.data_dir, USER).memory_full_md.read_text(
        "utf-8"
    )


async def test_new_session_without_the_model_uses_the_extractive_summary(env: Env) -> None:
    env.fake.chat_handler = model
    await env.agent.respond(env.msg("我們決定下週三去台中出差，預算一萬五千元"))
    env.fake.fail_status, env.fake.fail_paths = 500, {"/api/chat"}

    said = await env.agent.new_session(USER, env.clock, lang="zh")

    assert "對話摘要 (" in said
    full = UserPaths.of(env.services.settings.data_dir, USER).memory_full_md.read_text("utf-8")
    assert "台中" in full  # the extractive fallback kept the conversation's facts
