"""The briefing as one message: the model words it when it answers, the plain list otherwise."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.ollama_client import OllamaChat
from agent.reminders.briefing import BriefingBuilder
from agent.reminders.morning import BriefingWriter
from agent.reminders.service import ReminderService
from agent.reminders.store import ReminderStore
from bot.app import Services
from history.sessions import ROLE_USER, Message, Session
from memory.config import LifecycleConfig
from memory.state.short_term import ShortTermStore
from tests.agent.reminders.conftest import MINT, TPE, act
from tests.fakes.ollama_server import FakeOllama

USER = "telegram_42"
NOW = datetime(2026, 11, 22, 7, 30, tzinfo=TPE)


def _writer(services: Services, llm: OllamaChat | None) -> BriefingWriter:
    clock = [NOW - timedelta(hours=1)]
    reminders = ReminderService(
        ReminderStore(services.state),
        default_zone="Asia/Taipei",
        clock=lambda: clock[0],
        acts=MINT.check,
    )
    row, _ = reminders.propose_phrase(USER, "今天下午六點 去接小孩")
    reminders.confirm(act(USER, row.id), USER, row.id)
    clock[0] = NOW
    builder = BriefingBuilder(
        reminders,
        services.sessions,
        ShortTermStore(services.state),
        services.memory,
        services.access,
        LifecycleConfig(),
    )
    return BriefingWriter(builder, llm)


async def test_the_model_words_the_briefing_over_the_plain_data(
    services: Services, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_chat("早安！今天 18:00 記得去接小孩。")
    writer = _writer(services, OllamaChat(fake_ollama.url, retries=0))
    writer.language_of = lambda user_key: "zh"  # the person's language, as the bot wires it
    assert await writer.write(USER) == "早安！今天 18:00 記得去接小孩。"
    [request] = fake_ollama.chat_requests
    system, data = request["messages"]
    assert "Traditional Chinese" in system["content"] and "invent" in system["content"]
    assert data["role"] == "user" and "• 18:00 去接小孩" in data["content"]
    assert not request.get("tools")


async def test_the_plain_list_when_the_model_is_down_and_in_the_users_language(
    services: Services,
) -> None:
    session = Session(USER)
    session.messages.append(Message(ROLE_USER, "what's on today?", NOW - timedelta(hours=9)))
    services.sessions.save(session)
    down = OllamaChat("http://127.0.0.1:9", retries=0, timeout=2)
    text = await _writer(services, down).write(USER)
    assert text.startswith("Good morning! Your briefing for 2026-11-22")
    assert "• 18:00 去接小孩" in text
    assert (await _writer(services, None).write(USER)).startswith("Good morning!")
