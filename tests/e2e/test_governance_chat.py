"""Governance from chat, end to end (issue 13): the real bot process, the Telegram stand-in
and a fake Ollama that records every chat request.

- a pinned memory is in every prompt (as L0), however small the talk;
- /edit writes a new version and /history shows the chain;
- a conflicting proposal has 🔁 Replace, and pressing it supersedes the old memory;
- the weekly fading notice arrives (a short setting makes "weekly" seconds) with a keep
  button, and pressing it keeps the memory;
- a compaction turn (a low turn threshold) says so in one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.base.markdown import Entry, MemoryDocument, parse_memory, render_memory
from tests.e2e.conftest import ALICE
from tests.e2e.harness import BotProcess, Emulator, User, bot_env
from tests.fakes.chat_requests import instruction_of
from tests.fakes.ollama_server import FakeOllama

KEY = f"telegram_{ALICE}"
SUMMARY = "- **主題：** 搬家到高雄的計畫\n- **決定：** 三月底前找好房子"


def model(request: dict[str, Any]) -> str:
    """Plain answers; a compaction's summary request gets bullets naming its topic."""
    system = instruction_of(request)
    return SUMMARY if "Summarise this conversation" in system else "好的。"


def prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []))


def memory_md(data: Path) -> str:
    path = data / "users" / KEY / "MEMORY.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def callbacks(message: dict[str, Any]) -> list[str]:
    markup = message.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row]


def with_buttons(user: User, needle: str, timeout: float = 30) -> dict[str, Any]:
    return user.wait_for(
        lambda m: needle in (m.get("text") or "") and bool(m.get("reply_markup")), timeout
    )


def wait_until(cond: Callable[[], bool], timeout: float = 20) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


@pytest.fixture
def run_bot(
    emulator: Emulator, ollama: FakeOllama, tmp_path: Path
) -> Iterator[Callable[..., tuple[BotProcess, User, Path]]]:
    """Start the bot with extra settings; returns (bot, Alice, data dir)."""
    emulator.reset()
    ollama.chat_handler = model
    started: list[BotProcess] = []
    data = tmp_path / "botmemory"

    def start(**extra: str) -> tuple[BotProcess, User, Path]:
        env = bot_env(emulator, ollama.url, data, str(ALICE))
        env.update(extra)
        bot = BotProcess(env)
        bot.start()
        started.append(bot)
        return bot, User(emulator, ALICE, "Alice"), data

    yield start
    for bot in started:
        bot.kill()


def entry_id(data: Path, text: str) -> str | None:
    """The id of the memory with ``text`` in Alice's MEMORY.md, if it is there."""
    return next((e.id for e in parse_memory(memory_md(data)).entries if e.text == text), None)


def remember(alice: User, data: Path, text: str) -> str:
    """/remember (saved at once, with ↩️ Undo); returns the new memory's id."""
    alice.send(f"/remember {text}")
    saved = with_buttons(alice, text)
    assert [c.split(":")[0] for c in callbacks(saved)] == ["ud"]
    wait_until(lambda: entry_id(data, text) is not None, 30)
    return str(entry_id(data, text))


def test_pin_edit_history_and_replace_from_chat(
    ollama: FakeOllama, run_bot: Callable[..., tuple[BotProcess, User, Path]]
) -> None:
    bot, alice, data = run_bot()
    rule = "Always answer in Traditional Chinese with a short summary first"
    rule_id = remember(alice, data, rule)

    # Pin it with the 📌 button under /memory: from then on it is L0 in every prompt.
    alice.send("/memory")
    listing = with_buttons(alice, rule)
    alice.press(listing, f"mm:p:{rule_id}")
    alice.wait_for(lambda m: (m.get("text") or "").startswith("📌"), timeout=30)
    assert "  - core: true" in memory_md(data)
    line = re.compile(rf"- \[L0 \| [0-9-]+ \| MEMORY\.md § [^\]]+\] {rule}")
    for text in ("hi", "Tell me a fun fact about octopuses", "謝謝你"):
        before = len(ollama.chat_requests)
        alice.inbox.clear()
        alice.send(text)
        alice.wait_text("好的", timeout=30)
        [request] = ollama.chat_requests[before:]
        assert line.search(prompt_text(request)), text  # L0: there whatever the message

    # /edit writes a new version; /history shows the chain, old to new.
    dentist = remember(alice, data, "My dentist is Dr. Lin on Heping Road")
    alice.inbox.clear()
    alice.send(f"/edit {dentist} My dentist is Dr. Chen at the Da'an clinic")
    edited = alice.wait_text("Edited", timeout=30)["text"]
    new_id = re.search(r"\((m-[0-9a-f-]+) replaces", edited)
    assert new_id is not None
    alice.inbox.clear()
    alice.send(f"/history {new_id.group(1)}")
    chain = alice.wait_text("Dr. Chen", timeout=30)["text"].splitlines()
    assert "[deprecated]" in chain[0] and "Dr. Lin" in chain[0]
    assert "[active]" in chain[1] and f"(← {dentist})" in chain[1]

    # A conflicting proposal: ➕ Add or 🔁 Replace; Replace supersedes the old memory.
    blue = remember(alice, data, "我喜歡藍色")
    alice.send("/remember 我喜歡綠色")
    shown = with_buttons(alice, "我喜歡綠色")
    assert [c.split(":")[1] for c in callbacks(shown)] == ["c", "r", "e", "d"]
    alice.press(shown, next(c for c in callbacks(shown) if c.startswith("pm:r:")))
    wait_until(lambda: entry_id(data, "我喜歡綠色") is not None, 30)
    doc = parse_memory(memory_md(data))
    by_text = {e.text: e for e in doc.entries}
    assert by_text["我喜歡藍色"].status == "deprecated"
    assert by_text["我喜歡綠色"].supersedes == (blue,)
    assert bot.terminate() == 0


def test_the_fading_notice_and_keep(
    run_bot: Callable[..., tuple[BotProcess, User, Path]], tmp_path: Path
) -> None:
    # A memory created 200 days ago, never used: it fades. "Weekly" is 3.6 seconds here.
    old = (datetime.now(UTC) - timedelta(days=200)).isoformat(timespec="seconds")
    entry = Entry(id="m-20250101-0ld0ne", text="I once tried durian ice cream", created_at=old)
    md = tmp_path / "botmemory" / "users" / KEY / "MEMORY.md"
    md.parent.mkdir(parents=True)
    md.write_text(render_memory(MemoryDocument(sections=("General",), entries=(entry,))))
    bot, alice, _ = run_bot(PCAI_LIFECYCLE_FADE_EVERY_HOURS="0.001")

    notice = with_buttons(alice, "durian", timeout=40)
    assert "🍂" in notice["text"] and f"/keep {entry.id}" in notice["text"]
    assert callbacks(notice) == [f"mm:k:{entry.id}"]
    alice.press(notice, f"mm:k:{entry.id}")
    alice.wait_for(lambda m: (m.get("text") or "").startswith("✅"), timeout=30)
    [kept] = parse_memory(md.read_text(encoding="utf-8")).entries
    assert kept.refreshed_at and kept.user_weight == 6 and kept.status == "active"
    assert kept.history[-1].endswith("kept by the user")
    assert bot.terminate() == 0


def test_a_compaction_says_so_in_one_line_once_written(
    run_bot: Callable[..., tuple[BotProcess, User, Path]],
) -> None:
    bot, alice, data = run_bot(
        PCAI_HISTORY_AUTO_WRITE_THRESHOLD_TURNS="3", PCAI_HISTORY_HISTORY_TURNS_AFTER="1"
    )
    for text in ("我們在計畫搬家到高雄", "預算大概每月兩萬"):
        alice.send(text)
        reply = alice.wait_text("好的", timeout=30)
        assert "📝" not in reply["text"]
    alice.send("三月底前要找好房子")
    line = alice.wait_text("📝", timeout=30)["text"]
    # The third answer did not wait for the summary: the line follows it, on its own.
    texts = [m.get("text") for m in alice.inbox]
    assert texts[texts.index(line) - 3 : texts.index(line)] == ["好的。"] * 3
    assert "\n" not in line
    assert "「對話摘要 (" in line and "MEMORY_FULL" not in line and "高雄" in line
    full = (data / "users" / KEY / "MEMORY_FULL.md").read_text(encoding="utf-8")
    assert "搬家到高雄的計畫" in full
    assert "高雄" in parse_memory(memory_md(data)).keywords
    assert bot.terminate() == 0
