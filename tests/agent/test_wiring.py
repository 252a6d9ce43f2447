"""The composition root wires the agent into the terminal chat (and the bot's backend)."""

from __future__ import annotations

import io

from bot.chat import TerminalChat
from bot.telegram.backend import backend_for
from tests.agent.conftest import USER, Env
from tests.fakes.ollama_server import tool_reply


async def test_terminal_chat_talks_to_the_agent(e5_env: Env) -> None:
    env = e5_env
    out = io.StringIO()
    chat = TerminalChat(backend_for(env.services), USER, out=out)
    env.fake.queue_chat(tool_reply("memory_save", text="我的狗叫做小白"), "好的，請確認。")
    await chat.handle("記住我的狗叫做小白")
    assert "好的，請確認。" in out.getvalue() and "我的狗叫做小白" in out.getvalue()
    await chat.handle("確認")
    assert [e.text for e in env.services.memory.entries(USER)] == ["我的狗叫做小白"]
    env.fake.queue_chat("你的狗叫小白。")
    await chat.handle("我的狗叫什麼名字？")
    assert "你的狗叫小白。" in out.getvalue()
    assert "我的狗叫做小白" in env.memory_block()
    [dog] = env.services.memory.entries(USER)
    # Found by search (L2) and reported by the bot's /why through the backend.
    assert [(m.layer, m.id) for m in backend_for(env.services).why(USER)] == [("L2", dog.id)]
