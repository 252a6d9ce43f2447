"""/remember and /remind typed by the user are their own act: done at once, with ↩️ Undo.

Through the real Application (offline Bot API) over the real services: the typed command goes
the way a "yes" goes (every guard, the section, the index), Undo takes it back (the memory
leaves every file and database, the reminder is cancelled), and what the model proposes in a
chat turn still waits for the user's answer.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from agent.reminders import store as rs
from bot.app import Services
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from bot.frontdesk.reminder_desk import reminder_desk_for
from tests.bot.conftest import FRIEND, OWNER, Harness
from tests.bot.offers import offer_in_terminal
from tests.fakes.ollama_server import tool_reply

KEY = f"telegram_{OWNER}"
WORD = "quincewort"  # the distinctive word of the memory that is taken back


def undo_button(tg: Harness) -> tuple[int, str]:
    """(message id, callback data) of the last message the bot sent with ↩️ Undo."""
    for name, params, result in reversed(tg.api.answered):
        markup: Any = params.get("reply_markup") or {}
        rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
        if name == "sendMessage" and rows and rows[0][0]["callback_data"].startswith("ud:"):
            return int(result["message_id"]), str(rows[0][0]["callback_data"])
    raise AssertionError(f"no Undo button in {tg.api.texts()}")


def holding(services: Services, needle: str) -> list[Path]:
    """Every file of the data folder (the user's files, sessions, both databases and their
    WAL) whose bytes hold ``needle``."""
    root = services.settings.data_dir
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def undo_rows(services: Services) -> int:
    with services.state.lock:
        return int(services.state.conn.execute("SELECT count(*) FROM forget_undo").fetchone()[0])


async def test_remember_is_saved_at_once_and_undo_leaves_no_copy(
    tg: Harness, services: Services
) -> None:
    await tg.send(OWNER, f"/remember My grandmother's stew uses {WORD} and smoked paprika")
    [entry] = services.memory.entries(KEY)
    assert WORD in entry.text and services.confirm.pending(KEY) == []
    said = tg.api.texts()[-1]
    assert said.startswith(f"✅ Remembered: {entry.text} ({entry.id}).") and "/undo" in said
    mid, data = undo_button(tg)
    assert data == f"ud:memory:{entry.id}"
    assert [h.chunk.unit_id for h in services.memory.search(KEY, WORD)][:1] == [entry.id]
    assert tg.asked() == []  # a command, never a chat turn
    assert holding(services, WORD)  # the attack is real: it is in the files now

    await tg.press(FRIEND, data, mid)  # someone else's press takes back nothing of OWNER's
    assert [e.id for e in services.memory.entries(KEY)] == [entry.id]
    await tg.press(OWNER, data, mid)
    assert services.memory.entries(KEY) == []
    assert services.memory.search(KEY, WORD) == []
    edit = tg.api.named("editMessageText")[-1]
    assert edit["message_id"] == mid
    assert edit["text"].startswith(f"↩️ Undone: remembering {entry.id} — ")
    assert "reply_markup" not in edit  # the button is gone with the text it stood under
    assert holding(services, WORD) == []  # MEMORY.md, the index, pcai.db: no copy anywhere
    assert undo_rows(services) == 0  # and no undo copy kept for it

    await tg.press(OWNER, data, mid)  # a second press: nothing left to take back
    assert tg.api.named("answerCallbackQuery")[-1]["text"].startswith("Nothing to undo")


async def test_the_typed_remember_keeps_every_check_of_the_write_path(
    tg: Harness, services: Services
) -> None:
    await tg.send(OWNER, "/remember my card is 4111 1111 1111 1111")
    assert "secrets are never stored" in tg.api.texts()[-1]
    await tg.send(OWNER, "/remember my sister Anna's birthday is March 3")
    await tg.send(OWNER, "/remember My sister Anna's birthday is March 3!")  # the same fact
    assert "already" in tg.api.texts()[-1]
    [entry] = services.memory.entries(KEY)
    assert entry.section.endswith("Personal")  # chosen as for any proposal
    assert holding(services, "4111") == []  # refused: stored nowhere
    with services.state.lock:
        rows = services.state.conn.execute(
            "SELECT source, status, entry_id FROM pending_memories WHERE user_key=?", (KEY,)
        ).fetchall()
    assert [tuple(r) for r in rows] == [("command", "confirmed", entry.id)]  # its provenance
    await tg.send(OWNER, "/remember this is important: I am allergic to peanuts")
    assert {e.text: e.user_weight for e in services.memory.entries(KEY)}[
        "I am allergic to peanuts"
    ] == 8


async def test_undo_typed_takes_back_the_latest_act(tg: Harness, services: Services) -> None:
    kept = services.memory.remember(KEY, "I live in Taipei")
    await tg.send(OWNER, f"/forget {kept.id}")
    await tg.send(OWNER, "/remember I walk the dog at seven")
    await tg.send(OWNER, "/undo")  # the /remember came last: it goes
    assert [e.text for e in services.memory.entries(KEY)] == []
    await tg.send(OWNER, "/undo")  # then the /forget before it: Taipei comes back
    assert [e.text for e in services.memory.entries(KEY)] == ["I live in Taipei"]


async def test_what_the_model_proposes_still_waits(tg: Harness, services: Services) -> None:
    def model(body: dict[str, Any]) -> Any:
        if body["messages"][-1]["role"] == "tool":
            return "Shall I keep that? Please confirm."
        return tool_reply("memory_save", text="I walk the dog at seven")

    assert tg.model is not None
    tg.model.chat_handler = model
    await tg.send(OWNER, "by the way, I walk the dog at seven")
    assert services.memory.entries(KEY) == []
    assert [p.text for p in services.confirm.pending(KEY)] == ["I walk the dog at seven"]
    [waiting] = services.confirm.pending(KEY)
    buttons = tg.last_markup()["reply_markup"]["inline_keyboard"][0]
    assert buttons[0]["callback_data"] == f"pm:c:{waiting.id}"  # ✅ Confirm: the user's act


async def test_remind_is_set_at_once_and_undo_cancels_it(tg: Harness, services: Services) -> None:
    service = services.reminders
    assert service is not None
    await tg.send(OWNER, "/remind tomorrow 9am call mom")
    [item] = service.listing(KEY)
    assert item.reminder.status == rs.SCHEDULED and item.reminder.source == "/remind"
    said = tg.api.texts()[-1]
    assert said.startswith("✅ Set. I'll remind you on") and "/undo" in said
    mid, data = undo_button(tg)
    assert data == f"ud:reminder:{item.reminder.id}"

    await tg.press(OWNER, data, mid)
    row = service.store.get(KEY, item.reminder.id)
    assert row.status == rs.CANCELLED and service.listing(KEY) == []
    assert tg.api.named("editMessageText")[-1]["text"] == (
        f"↩️ Undone: reminder #{row.id} (call mom) is cancelled."
    )


async def test_a_reminder_the_model_proposes_still_waits(tg: Harness, services: Services) -> None:
    service = services.reminders
    assert service is not None
    await tg.offer_reminder(OWNER, "tomorrow 9am call mom")
    [item] = service.listing(KEY)
    assert item.reminder.status == rs.PROPOSED
    await tg.send(OWNER, "/undo")  # nothing the user did: nothing to take back
    assert service.store.get(KEY, item.reminder.id).status == rs.PROPOSED


# -- the terminal: the same acts, /undo typed ------------------------------------------------


async def test_the_terminal_remembers_at_once_and_undo_takes_it_back(services: Services) -> None:
    out = io.StringIO()
    chat = TerminalChat(
        backend_for(services), "cli_ann", out, reminders=reminder_desk_for(services)
    )
    await chat.handle(f"/remember My grandmother's stew uses {WORD}")
    [entry] = services.memory.entries("cli_ann")
    assert f"✅ Remembered: {entry.text} ({entry.id})" in out.getvalue()
    assert "/undo within 10 minutes" in out.getvalue() and "/pin <id>" not in out.getvalue()
    await chat.handle("/remember my password is hunter2-Secret!")
    assert "secrets are never stored" in out.getvalue()
    offer_in_terminal(chat, services, "I walk the dog at seven")  # the model's: it waits

    await chat.handle("/undo")
    assert services.memory.entries("cli_ann") == []
    assert f"↩️ Undone: remembering {entry.id} — " in out.getvalue()
    assert holding(services, WORD) == [] and holding(services, "hunter2") == []
    assert [p.text for p in services.confirm.pending("cli_ann")] == ["I walk the dog at seven"]

    await chat.handle("/remind tomorrow 9am call mom")
    assert "[↩️ Undo reminder #" in out.getvalue() and "'call mom'] /undo" in out.getvalue()
    service = services.reminders
    assert service is not None
    [item] = service.listing("cli_ann")
    assert item.reminder.status == rs.SCHEDULED
    await chat.handle("/undo")
    assert service.store.get("cli_ann", item.reminder.id).status == rs.CANCELLED
    await chat.handle("/undo")  # nothing left: the model's proposal is not the user's act
    assert out.getvalue().rstrip().endswith("within 10 minutes.")
    assert [p.text for p in services.confirm.pending("cli_ann")] == ["I walk the dog at seven"]


def undo_label(tg: Harness) -> str:
    """The label of the last ↩️ Undo button the bot sent."""
    for name, params, _ in reversed(tg.api.answered):
        markup: Any = params.get("reply_markup") or {}
        rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
        if name == "sendMessage" and rows and rows[0][0]["callback_data"].startswith("ud:"):
            return str(rows[0][0]["text"])
    raise AssertionError(f"no Undo button in {tg.api.texts()}")


async def test_the_undo_buttons_say_what_they_take_back(tg: Harness) -> None:
    await tg.send(OWNER, "/remember I take my coffee black, no sugar, every single morning")
    assert undo_label(tg) == "↩️ Undo remembering 'I take my coffee black…'"
    await tg.send(OWNER, "/remind tomorrow 9am call mom")
    label = undo_label(tg)
    assert label.startswith("↩️ Undo reminder #") and label.endswith(" 'call mom'")
    await tg.send(OWNER, "/lang zh")
    await tg.send(OWNER, "/remember 我每天早上喝一杯黑咖啡")
    assert undo_label(tg) == "↩️ 復原記住「我每天早上喝一杯黑咖啡」"
