"""Reminders in the terminal chat: the same commands, yes / no, and alerts between the lines."""

from __future__ import annotations

import asyncio
import io
import queue
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.ollama_client import OllamaChat
from agent.reminders import store as rs
from bot.app import Services, build_agent
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from bot.frontdesk.reminder_desk import reminder_desk_for
from tests.fakes.ollama_server import FakeOllama, tool_reply

KEY = "cli_ann"


class Keyboard:
    """stdin that the test types into, line by line (``readline`` waits like a terminal)."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()

    def type(self, line: str) -> None:
        self.lines.put(line + "\n")

    def readline(self) -> str:
        return self.lines.get(timeout=30)


async def _until(cond: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_a_due_reminder_is_printed_between_the_users_lines(
    services: Services, fake_ollama: FakeOllama
) -> None:
    service = services.reminders
    assert service is not None
    due = datetime.now(UTC) + timedelta(seconds=1.5)

    def model(body: dict[str, Any]) -> Any:
        if body["messages"][-1]["role"] == "tool":
            return "OK, confirm it please."
        return tool_reply("reminder_create", when=due.isoformat(), text="stretch")

    fake_ollama.chat_handler = model
    build_agent(services, OllamaChat(fake_ollama.url, services.settings.chat_model))
    out, keys = io.StringIO(), Keyboard()
    chat = TerminalChat(backend_for(services), KEY, out, reminders=reminder_desk_for(services))
    running = asyncio.create_task(chat.run_async(keys))  # type: ignore[arg-type]
    keys.type("remind me to stretch in a moment")
    await _until(lambda: "Set this reminder?" in out.getvalue())
    [item] = service.listing(KEY)
    assert item.reminder.status == rs.PROPOSED
    assert f"/reminders confirm {item.reminder.id}" in out.getvalue()
    keys.type("yes")
    await _until(lambda: "✅ Set." in out.getvalue())
    assert service.store.get(KEY, item.reminder.id).status == rs.SCHEDULED

    await _until(lambda: "⏰ Reminder: stretch" in out.getvalue())  # while the user is idle
    assert "提醒" not in out.getvalue()  # the person's one language
    rid = item.reminder.id
    assert f"/reminders snooze {rid} 10m" in out.getvalue()
    assert service.store.get(KEY, rid).status == rs.SENT
    keys.type(f"/reminders snooze {rid} 1h")
    await _until(lambda: "snoozed until" in out.getvalue())
    moved = service.store.get(KEY, rid)
    assert moved.status == rs.SCHEDULED and moved.due - datetime.now(UTC) > timedelta(minutes=59)
    keys.type("/reminders")
    await _until(lambda: "Your reminders:" in out.getvalue())
    assert f"/reminders cancel {rid}" in out.getvalue()
    keys.type(f"/reminders cancel {rid}")
    await _until(lambda: f"Cancelled #{rid}" in out.getvalue())
    keys.type("/quit")
    await asyncio.wait_for(running, 10)
    assert service.store.get(KEY, rid).status == rs.CANCELLED
    assert service.sender is None  # the chat let go of the service on the way out


async def test_the_terminal_schedules_only_its_own_users_reminders(services: Services) -> None:
    service = services.reminders
    assert service is not None
    mint = services.user_acts
    due = datetime.now(UTC) + timedelta(seconds=1)
    mine = service.propose(KEY, "mine", due)
    theirs = service.propose("telegram_5", "theirs", due)
    for row in (mine, theirs):
        act = mint.act(row.user_key, str(row.id), "confirm", via="button", kind="reminder")
        service.confirm(act, row.user_key, row.id)
    out, keys = io.StringIO(), Keyboard()
    chat = TerminalChat(backend_for(services), KEY, out, reminders=reminder_desk_for(services))
    running = asyncio.create_task(chat.run_async(keys))  # type: ignore[arg-type]
    await _until(lambda: "⏰ Reminder: mine" in out.getvalue())  # nothing known: English
    await asyncio.sleep(0.5)
    keys.type("/quit")
    await asyncio.wait_for(running, 10)
    assert "theirs" not in out.getvalue()
    assert service.store.get("telegram_5", theirs.id).status == rs.SCHEDULED  # the bot's to send


async def test_remind_tz_briefing_and_a_birthday_offer_in_the_terminal(services: Services) -> None:
    backend = backend_for(services)  # the real write path: the offer follows a real confirm
    out = io.StringIO()
    chat = TerminalChat(backend, KEY, out)
    await chat.handle("/tz Asia/Taipei")
    assert "Asia/Taipei" in out.getvalue()
    await chat.handle("/remind 明天早上九點 打電話給媽媽")  # typed: set at once, /undo cancels
    assert "✅ 已設定。我會在" in out.getvalue() and "打電話給媽媽" in out.getvalue()
    assert "[↩️ 復原提醒 #1「打電話給媽媽」] /undo" in out.getvalue()  # says what it takes back
    await chat.handle("/undo")
    assert "已取消" in out.getvalue()
    assert services.reminders is not None and services.reminders.listing(KEY) == []
    await chat.handle("/briefing 7:30")
    assert "07:30" in out.getvalue()

    await chat.handle("/remember 結婚紀念日是10月12日")  # saved at once
    [entry] = services.memory.entries(KEY)
    assert "10 月 12 日" in out.getvalue() and f"/reminders offer {entry.id}" in out.getvalue()
    await chat.handle("好")  # ...and this one answers the offer shown last
    [item] = services.reminders.listing(KEY)
    assert item.reminder.source == f"memory:{entry.id}" and item.rule is not None
    assert (item.next_local.month, item.next_local.day) == (10, 11)


async def test_odd_reminder_inputs_get_a_sentence_in_the_users_language(
    services: Services,
) -> None:
    backend = backend_for(services)
    out = io.StringIO()
    chat = TerminalChat(backend, KEY, out)
    for line, zh in [
        ("/remind 十十分鐘後 喝水", "不是我看得懂的數字"),
        ("/remind 9999年12月31日 世紀末", "時間太遠了"),
        ("/remind 一億分鐘後 喝水", ""),  # whatever it reads, never the apology
        ("/reminders confirm 123456789012345678901", ""),
    ]:
        start = len(out.getvalue())
        await chat.handle(line)
        said = out.getvalue()[start:]
        assert zh in said and said.strip(), line
        assert not any(w in said for w in ("Traceback", "出了點問題", "出了問題", "went wrong"))
    start = len(out.getvalue())
    await chat.handle("/remind in 99999999999 minutes drink water")
    assert "too far ahead" in out.getvalue()[start:]  # typed in English: said in English


async def test_edge_numbers_and_dates_get_one_sentence_in_the_terminal(
    services: Services,
) -> None:
    """On the old code each of these printed a traceback (OverflowError, "year 10000 is out of
    range", int("²")) or answered a reminder the person never named ("١٢" read as 12)."""
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), KEY, out, reminders=reminder_desk_for(services))
    await chat.handle("/tz America/New_York")
    await chat.handle("/remind in 10 minutes tea")
    [tea] = services.reminders.listing(KEY) if services.reminders else []
    arabic = str(tea.reminder.id).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    for line, said in [
        ("/remind " + "一" * 400 + "天後 喝水", "時間太遠了"),
        ("/remind on 31 Dec 9999 23:59 party", "too far ahead"),
        ("/remind 9999-12-31 23:59 party", "too far ahead"),
        ("/remind in " + "9" * 400 + " days x", "too far ahead"),
        ("/reminders confirm ²", "“²” is not a reminder number"),
        (f"/reminders cancel {arabic}", f"“{arabic}” is not a reminder number"),
        ("/reminders snooze ٣ 1h", "“٣” is not a reminder number"),
        ("/reminders done " + "1" * 30, "is not a reminder number"),
    ]:
        start = len(out.getvalue())
        await chat.handle(line)
        got = out.getvalue()[start:].strip()
        assert said in got and "\n" not in got, (line, got)
    assert services.reminders is not None  # tea was not cancelled by its id in other digits
    assert [i.reminder.status for i in services.reminders.listing(KEY)] == [tea.reminder.status]
