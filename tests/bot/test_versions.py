"""Versions in chat and the CLI: /memory, /stats and the export show each memory once."""

from __future__ import annotations

import argparse
import io
import json
from datetime import UTC, datetime

import pytest

from bot.app import Services
from bot.chat import TerminalChat
from bot.cli import cmd_export
from bot.frontdesk.backend import backend_for

USER = "cli_ann"
TEA = "I drink oolong tea every morning"
GREEN = "I drink green tea every morning"
ANNA = "my sister Anna's birthday is March 3"


async def test_after_edit_lists_show_the_current_version_and_history_the_old(
    services: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC)
    tea = services.memory.remember(USER, TEA, now=now)
    anna = services.memory.remember(USER, ANNA, now=now)
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), USER, out)

    await chat.handle(f"/edit {tea.id} {GREEN}")
    [green] = [e for e in services.memory.entries(USER) if e.text == GREEN]
    listed = await _said(chat, out, "/memory")
    assert green.id in listed and anna.id in listed and tea.id not in listed
    assert TEA not in listed
    stats = await _said(chat, out, "/stats")
    assert "memories: 2 (2 active)" in stats and "older versions: 1" in stats
    history = await _said(chat, out, f"/history {green.id}")
    assert TEA in history and GREEN in history  # the old one lives here

    cmd_export(services, argparse.Namespace(user=USER, format="json", json=True))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    records = {r["id"]: r for r in lines}
    assert len(lines) == 2 and set(records) == {green.id, anna.id}
    assert [v["id"] for v in records[green.id]["versions"]] == [tea.id]
    assert records[green.id]["versions"][0]["status"] == "deprecated"
    assert records[anna.id]["versions"] == []


async def _said(chat: TerminalChat, out: io.StringIO, line: str) -> str:
    """What the chat printed for one line."""
    mark = len(out.getvalue())
    await chat.handle(line)
    return out.getvalue()[mark:]
