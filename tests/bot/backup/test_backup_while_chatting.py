"""Backups taken by another process while a person chats, confirms memories and sets reminders.

The person's acts run one after another, each leaving its mark in one place: a chat line in
the daily log, a proposal confirmed and a typed /remember in MEMORY.md, a typed /remind in
``pcai.db``. A snapshot is consistent when the marks it holds are exactly the first k of that
sequence: one taken with ``pcai.db`` and the files at different moments holds a later mark
without an earlier one. Every snapshot is checked so, restored into a new folder; the last
one, taken after the person stops, restores every memory, reminder and log line and
byte-identical Markdown.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.ollama_client import OllamaChat
from bot.app import Services, build_agent, build_services
from bot.backup import restore_snapshot, snapshots, verify_snapshot
from bot.cli import main
from bot.settings import load_settings
from memory.index.embedders import E5Embedder
from tests.bot.backup.helpers import log_text, markdown_files, memories, reminders, terminal
from tests.bot.offers import offer_in_terminal
from tests.fakes.ollama_server import FakeOllama

ROOT = Path(__file__).resolve().parents[3]
KEY = "cli_ann"
# Told apart by meaning too: two memories alike would be a conflict ("add or replace?").
PROPOSED = (
    "I planted an apple tree by the gate",
    "My sister lives in Lisbon",
    "I play the cello on Sundays",
    "My bike is a green Brompton",
    "I am allergic to hazelnuts",
    "My favourite author is Ursula Le Guin",
    "I swim in the lake each July",
    "My cat is called Miso",
    "I learned Finnish at school",
    "My car needs winter tyres",
    "I bake sourdough on Fridays",
    "My office is on the fourth floor",
    "I collect old maps of Prague",
    "My dentist is Dr. Okafor",
)
TYPED = (
    "I take the 7:40 train to work",
    "My brother studies marine biology",
    "I prefer window seats on planes",
    "My grandmother grew up in Kyoto",
    "I run five kilometres before breakfast",
    "My laptop is a ThinkPad X1",
    "I volunteer at the library on Tuesdays",
    "My favourite tea is Darjeeling",
    "I keep bees in the back garden",
    "My daughter plays chess",
    "I repair old radios as a hobby",
    "My flat has a view of the river",
    "I write poems in Portuguese",
    "My neighbour owns a red kayak",
)
STEPS = len(PROPOSED)
# `pcai backup` over and over, in its own process, until the stop file appears.
BACKUPS = """
import sys
from pathlib import Path
from bot.cli import main
dest, stop = sys.argv[1], Path(sys.argv[2])
while not stop.exists():
    assert main(["backup", dest]) == 0
"""


def _marks(i: int) -> list[tuple[str, str]]:
    """Step ``i``'s marks in the order they are made: (where, text)."""
    return [
        ("log", f"chat line number {i}."),
        ("memory", PROPOSED[i]),
        ("memory", TYPED[i]),
        ("reminder", f"call person number {i}"),
    ]


SEQUENCE = [mark for i in range(STEPS) for mark in _marks(i)]


def _present(data_dir: Path) -> list[bool]:
    found = {
        "log": log_text(data_dir, KEY),
        "memory": "\n".join(memories(data_dir, KEY)),
        "reminder": "\n".join(reminders(data_dir, KEY)),
    }
    return [
        (text in found[where].split("\n") if where != "log" else text in found[where])
        for where, text in SEQUENCE
    ]


async def _person(services: Services) -> None:
    chat = terminal(services, KEY)
    for i in range(STEPS):
        await chat.handle(f"chat line number {i}.")
        offer_in_terminal(chat, services, PROPOSED[i])
        await chat.handle("yes")
        await chat.handle(f"/remember {TYPED[i]}")
        await chat.handle(f"/remind in {i + 2} hours call person number {i}")


async def test_snapshots_taken_while_a_person_acts_are_each_one_moment(
    services: Services,
    fake_ollama: FakeOllama,
    embedder: E5Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_ollama.chat_handler = lambda body: "Noted."
    build_agent(services, OllamaChat(fake_ollama.url, services.settings.chat_model))
    data = services.settings.data_dir
    dest, stop = tmp_path / "backups", tmp_path / "stop"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCAI_")}
    env.update(PCAI_DATA_DIR=str(data), PYTHONPATH=str(ROOT))
    backups = subprocess.Popen(
        [sys.executable, "-c", BACKUPS, str(dest), str(stop)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not snapshots(dest):  # the other process is up and backing up
            assert backups.poll() is None, backups.stderr.read() if backups.stderr else ""
            await asyncio.sleep(0.05)
        await _person(services)
    finally:
        stop.touch()
        _, err = await asyncio.to_thread(backups.communicate, timeout=300)
    assert backups.returncode == 0, err

    taken = snapshots(dest)
    counts: list[int] = []
    for n, snapshot in enumerate(taken):
        verify_snapshot(snapshot)
        copy = tmp_path / f"restored-{n}"
        restore_snapshot(snapshot, copy)
        present = _present(copy)
        k = present.count(True)
        assert present == [True] * k + [False] * (len(present) - k), (snapshot.name, present)
        counts.append(k)
    assert any(0 < k < len(SEQUENCE) for k in counts), counts  # some caught the person mid-way

    # After the person stops: a snapshot restores everything, the Markdown byte for byte.
    monkeypatch.setenv("PCAI_DATA_DIR", str(data))
    final_dest, target = tmp_path / "final", tmp_path / "new-home"
    assert main(["backup", str(final_dest)]) == 0
    [final] = snapshots(final_dest)
    expected = markdown_files(data)
    assert main(["restore", str(final), "--data", str(target)]) == 0
    assert "reindex [" in capsys.readouterr().err
    assert markdown_files(target) == expected
    assert _present(target) == [True] * len(SEQUENCE)
    restored = build_services(load_settings({"PCAI_DATA_DIR": str(target)}), embedder=embedder)
    try:
        hits: Any = restored.library.search(KEY, "what is my cat's name")
        assert any(PROPOSED[7] in h.chunk.text for h in hits)
        assert restored.reminders is not None
        listed = [item.reminder.text for item in restored.reminders.listing(KEY)]
        assert sorted(listed) == sorted(f"call person number {i}" for i in range(STEPS))
    finally:
        restored.close()
