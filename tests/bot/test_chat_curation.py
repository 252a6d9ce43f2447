"""The terminal chat has the same governance commands; the fading notice says /keep <id>."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from agent.texts import say
from bot.app import Services
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from bot.jobs import JobRunner, user_jobs

USER = "cli_ann"


async def test_terminal_pin_edit_keep_and_the_fading_notice(services: Services) -> None:
    now = datetime.now(UTC)
    e = services.memory.remember(USER, "I once tried durian ice cream", now=now)
    doc = services.memory.document(USER)
    old = (now - timedelta(days=90)).isoformat(timespec="seconds")
    # Weight 3: the pin and unpin below are two uses, which alone would lift a weight-5
    # memory's health above the fading line.
    faint = replace(e, created_at=old, user_weight=3)
    services.memory.write_document(USER, doc.with_entry(faint))
    out = io.StringIO()
    chat = TerminalChat(backend_for(services), USER, out)

    await chat.handle("/memory")
    assert say("chat_buttons", "en") in out.getvalue()  # no buttons here: the commands instead
    await chat.handle(f"/pin {e.id}")
    assert services.memory.entries(USER)[0].is_core
    await chat.handle(f"/unpin {e.id}")

    told: list[tuple[str, str]] = []

    async def notify(user_key: str, text: str) -> None:
        told.append((user_key, text))

    [fading] = [s for s in user_jobs(USER, notify) if s.name == "fading"]
    status = await JobRunner(services, now=lambda: now).run(fading)
    assert status is not None and status.ok
    [(who, text)] = told
    assert who == USER and f"/keep {e.id}" in text and "durian" in text
    await chat.handle(f"/keep {e.id}")
    assert "keep remembering" in out.getvalue()
    [kept] = services.memory.entries(USER)
    assert kept.refreshed_at and kept.history[-1].endswith("kept by the user")
    await chat.handle(f"/edit {e.id} I tried durian ice cream in Penang")
    assert [x.status for x in services.memory.entries(USER)] == ["deprecated", "active"]
    # Each command on the memory was one use of it (listing and the notice are not): pin,
    # unpin, keep; the new version has those three and the edit's one.
    new = services.memory.entries(USER)[1].id
    assert services.access.get(USER, e.id).count == 3
    assert services.access.get(USER, new).count == 4
