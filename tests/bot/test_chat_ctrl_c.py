"""Ctrl-C in the terminal chat: during a reply it stops the reply (what was shown is kept in
the session, marked as cut) and the prompt comes back; at the prompt it leaves (issue 30).

A real ``pcai chat`` process typing at a real pseudo-terminal, answered by the fake Ollama
on 127.0.0.1, slowly; Ctrl-C is the SIGINT a terminal sends.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.fakes.ollama_server import FakeOllama

ROOT = Path(__file__).resolve().parents[2]
STORY = "Once upon a time there was a long story. " * 60
CUT = "[stopped here: you pressed Ctrl-C]"


class Screen:
    """What the process printed, read as it comes."""

    def __init__(self, stream: object) -> None:
        self.text = ""
        self._lock = threading.Lock()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: object) -> None:
        while chunk := os.read(stream.fileno(), 4096):  # type: ignore[attr-defined]
            with self._lock:
                self.text += chunk.decode("utf-8", "replace")

    def wait_for(self, wanted: str, after: int = 0, seconds: float = 90.0) -> int:
        """Where ``wanted`` shows (after ``after``), waiting for it."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self._lock:
                at = self.text.find(wanted, after)
            if at >= 0:
                return at + len(wanted)
            time.sleep(0.05)
        raise AssertionError(f"{wanted!r} never showed; the screen:\n{self.text}")


def test_ctrl_c_stops_the_reply_and_a_second_one_at_the_prompt_leaves(
    clean_environment: Path, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_chat(STORY)
    fake_ollama.chunk_delay = 0.05  # 4 characters a chunk: a minute for the whole story
    keyboard, terminal = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OLLAMA_HOST": fake_ollama.url}
    chat = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "chat", "--user", "cli_ann"],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(terminal)
    try:
        screen = Screen(chat.stdout)
        at = screen.wait_for("\n> ")  # the prompt (there was none)
        os.write(keyboard, b"tell me a long story\n")
        at = screen.wait_for("Once upon a time there was a long story. Once", at)
        chat.send_signal(signal.SIGINT)
        at = screen.wait_for(CUT, at)
        at = screen.wait_for("\n> ", at)  # back at the prompt, still running
        assert chat.poll() is None
        session = json.loads((clean_environment / "history" / "cli_ann.json").read_text("utf-8"))
        roles = [(m["role"], m["content"]) for m in session["messages"]]
        assert roles[0] == ("user", "tell me a long story")
        said, kept = roles[1]
        assert said == "assistant" and kept.endswith(CUT)
        assert kept.startswith("Once upon a time") and len(kept) < len(STORY)
        chat.send_signal(signal.SIGINT)  # at the prompt: leave
        assert chat.wait(timeout=30) == 0
        screen.wait_for("Bye.", at)
    finally:
        fake_ollama.chunk_delay = 0.0
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        os.close(keyboard)
