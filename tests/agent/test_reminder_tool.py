"""``reminder_create``: the model proposes a reminder through the real agent; never schedules."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from agent.prompt import SYSTEM_PROMPT
from agent.reminders import store as rs
from tests.agent.conftest import USER, Env
from tests.fakes.ollama_server import tool_reply


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


class Wakeups:
    """The scheduler seam, recording what would be woken (nothing may be, before a confirm)."""

    def __init__(self) -> None:
        self.jobs: dict[str, datetime] = {}

    def schedule_at(self, when: datetime, key: str) -> None:
        self.jobs[key] = when

    def cancel(self, key: str) -> None:
        self.jobs.pop(key, None)


async def test_the_model_proposes_a_reminder_and_nothing_is_scheduled(env: Env) -> None:
    service = env.services.reminders
    assert service is not None
    wakeups = Wakeups()
    service.scheduler = wakeups
    service.set_zone(USER, "Asia/Taipei")
    tomorrow = (datetime.now(ZoneInfo("Asia/Taipei")) + timedelta(days=1)).date()
    env.fake.queue_chat(
        tool_reply("reminder_create", when=f"{tomorrow}T09:00:00", text="打電話給媽媽"),
        "好的，請確認這個提醒。",
    )
    reply = await env.agent.respond(env.msg("提醒我明天早上九點打電話給媽媽"))

    offered = [t["function"]["name"] for t in env.fake.chat_requests[0]["tools"]]
    assert "reminder_create" in offered
    [view] = reply.reminders
    row = service.store.get(USER, view.reminder_id)
    assert row.status == rs.PROPOSED and row.text == "打電話給媽媽" and row.source == "tool"
    # the ISO time is read in the user's zone
    assert row.due == datetime(
        tomorrow.year, tomorrow.month, tomorrow.day, 9, tzinfo=ZoneInfo("Asia/Taipei")
    )
    assert view.understood_zh.startswith(f"我會在 {tomorrow}")
    assert wakeups.jobs == {}  # a proposal: nothing rings until the user confirms
    [result] = _tool_results(env.fake.chat_requests[1])
    assert result["status"] == "pending_confirmation" and result["reminder_id"] == row.id
    assert "button" not in result["note"]  # the terminal has none
    assert "reminder_create" in SYSTEM_PROMPT


async def test_bad_times_are_answered_to_the_model(env: Env) -> None:
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    env.fake.queue_chat(
        tool_reply("reminder_create", when="next tuesday-ish", text="x"),
        tool_reply("reminder_create", when=past, text="tea"),
        tool_reply(
            "reminder_create",
            when=(datetime.now(UTC) + timedelta(hours=1)).isoformat(),
            text="tea",
            recurrence="fortnightly",
        ),
        "sorry",
    )
    reply = await env.agent.respond(env.msg("remind me of tea", language="en"))
    results = _tool_results(env.fake.chat_requests[-1])
    assert [r["status"] for r in results] == ["refused"] * 3
    assert "ISO" in results[0]["reason"] and "passed" in results[1]["reason"]
    assert "daily, weekly" in results[2]["reason"]
    assert reply.reminders == ()
    assert env.services.reminders is not None
    assert env.services.reminders.listing(USER) == []


async def test_no_reminder_tool_in_a_group(env: Env) -> None:
    env.fake.queue_chat("hi all")
    await env.agent.respond(
        env.msg("hello", in_group=True, group_session="telegram_group_-100200300")
    )
    assert not env.fake.chat_requests[0].get("tools")
