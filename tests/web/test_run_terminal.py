"""`pcai run` without a token: the terminal chat serves the page while it runs, /web included."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.fakes.ollama_server import FakeOllama

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _reader(stream: object, lines: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.put(line)


def _until(lines: queue.Queue[str], needle: str, seconds: float = 120) -> str:
    seen = []
    while True:
        try:
            line = lines.get(timeout=seconds)
        except queue.Empty:
            raise AssertionError(f"no line with {needle!r}; saw {seen}") from None
        seen.append(line)
        if needle in line:
            return line


def test_the_terminal_chat_serves_the_page_until_it_ends(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PCAI_", "TELEGRAM_"))}
    env |= {
        "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
        "PCAI_WEB_PORT": str(port),
        "PCAI_USER": "cli_alice",
        "OLLAMA_HOST": fake_ollama.url,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    assert proc.stdin is not None
    try:
        started = _until(lines, "Memory page:")
        assert f"http://127.0.0.1:{port}" in started
        proc.stdin.write("/web\n")
        proc.stdin.flush()
        link = _until(lines, "/login?t=").strip()
        assert link.startswith(f"http://127.0.0.1:{port}/login?t=")
        with httpx.Client() as browser:
            r = browser.post(link.split("?")[0], data={"t": link.split("t=", 1)[1]})
            assert r.status_code == 303
            me = browser.get(f"http://127.0.0.1:{port}/me").json()
            assert me["user_key"] == "cli_alice"
        proc.stdin.write("/quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with pytest.raises(httpx.ConnectError):  # the page stopped with the chat
        httpx.get(f"http://127.0.0.1:{port}/signin", timeout=2)
