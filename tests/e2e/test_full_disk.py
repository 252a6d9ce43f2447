"""A full disk: the user is told so in one sentence in their language, and nothing breaks.

The bot runs with its data dir on a small tmpfs of its own (``unshare -rm``: a user and mount
namespace, no privileges needed), which the test fills through ``/proc/<pid>/root`` until
the kernel answers ENOSPC: a real full disk, nothing faked.
"""

from __future__ import annotations

import errno
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.texts import say
from tests.e2e.conftest import ALICE, BOB
from tests.e2e.harness import ROOT, BotProcess, Emulator, User, _wait_for_line, bot_env
from tests.e2e.test_conversation import scripted_model
from tests.fakes.ollama_server import FakeOllama


class BotOnSmallDisk(BotProcess):
    """The real bot, its data dir a 64 MB tmpfs only it can see."""

    def start(self) -> None:
        data = self.env["PCAI_DATA_DIR"]
        Path(data).mkdir(parents=True, exist_ok=True)
        script = f'mount -t tmpfs -o size=64m tmpfs "{data}" && exec "$0" -m bot.cli run'
        self.proc = subprocess.Popen(
            ["unshare", "-rm", "sh", "-c", script, sys.executable],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = _wait_for_line(self.proc, "PCAI bot started", timeout=90)

    def data_dir_seen_by_the_bot(self) -> Path:
        assert self.proc is not None
        return Path(f"/proc/{self.proc.pid}/root") / self.env["PCAI_DATA_DIR"].lstrip("/")


@pytest.fixture
def small_disk_bot(
    emulator: Emulator, ollama: FakeOllama, tmp_path: Path
) -> Iterator[BotOnSmallDisk]:
    emulator.reset()
    ollama.chat_handler = scripted_model
    bot = BotOnSmallDisk(bot_env(emulator, ollama.url, tmp_path / "botmemory", f"{ALICE},{BOB}"))
    bot.start()
    yield bot
    bot.kill()


def fill(directory: Path) -> Path:
    """Write a file in ``directory`` until the file system is full; returns it."""
    filler = directory / "filler"
    chunk = b"\0" * (1 << 20)
    with filler.open("wb") as out:
        try:
            while True:
                out.write(chunk)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_full_disk_is_one_sentence_in_the_users_language(
    emulator: Emulator, small_disk_bot: BotOnSmallDisk
) -> None:
    alice = User(emulator, ALICE, "Alice")  # no client language: her Chinese text decides
    alice.send("今天天氣很好")
    alice.wait_text("好的。", timeout=30)

    filler = fill(small_disk_bot.data_dir_seen_by_the_bot())
    alice.send("明天下午三點和牙醫有約")
    told = alice.wait_for(lambda m: "好的" not in (m.get("text") or ""), timeout=30)["text"]
    assert told == say("disk_full", "zh")
    bob = User(emulator, BOB, "Bob")  # no client language either: his English text decides
    bob.send("Remind me that the dentist moved to Friday")
    assert bob.wait_for(lambda m: bool(m.get("text")), timeout=30)["text"] == say(
        "disk_full", "en"
    )

    filler.unlink()  # room again: the bot answers as before, it never stopped
    alice.send("那我們後天再聊")
    alice.wait_for(lambda m: m.get("text") == "好的。" and m is not alice.inbox[0], timeout=30)
    assert small_disk_bot.terminate() == 0
