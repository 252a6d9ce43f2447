"""``/web`` in a ``pcai chat`` beside a running ``pcai run``: a link to the page it serves.

The chat serves no page of its own (the service holds the data folder and the page); on the old
code its /web said "The memory page is not running" while the service served it on the same
data. Both are real processes here: the bot polling the Telegram stand-in, and the chat typed
into through its stdin.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.e2e.harness import ROOT, BotProcess, free_port
from tests.e2e.test_conversation import wait_until
from tests.fakes.ollama_server import FakeOllama


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    got: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in proc.stdout or []:
            got.put(line)

    threading.Thread(target=read, daemon=True).start()
    return got


def _until(lines: queue.Queue[str], needle: str, seconds: float = 60) -> str:
    seen = []
    while True:
        try:
            line = lines.get(timeout=seconds)
        except queue.Empty:
            raise AssertionError(f"no line with {needle!r}; saw {seen}") from None
        seen.append(line)
        if needle in line:
            return line


def test_web_in_a_chat_beside_the_service_links_to_its_page(
    ollama: FakeOllama, start_bot: Callable[..., BotProcess], tmp_path: Path
) -> None:
    port = free_port()
    bot = start_bot(PCAI_WEB_PORT=str(port))
    page = f"http://127.0.0.1:{port}"
    url_file = tmp_path / "botmemory" / "web.url"
    wait_until(url_file.exists, timeout=30)  # the page starts just after the bot
    assert url_file.read_text(encoding="utf-8").strip() == page  # the service serves it

    env = {k: v for k, v in bot.env.items() if k != "TELEGRAM_BOT_TOKEN"}
    env["PCAI_WEB_PORT"] = str(free_port())  # the chat's own setting is not where the page is
    chat = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "chat", "--user", "alice"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = _lines(chat)
    assert chat.stdin is not None
    try:
        chat.stdin.write("/web\n")
        chat.stdin.flush()
        link = _until(lines, "/login?t=").strip().split()[-1]
        assert link.startswith(f"{page}/login?t="), link
        with httpx.Client() as browser:
            r = browser.post(f"{page}/login", data={"t": link.split("t=", 1)[1]})
            assert r.status_code == 303
            assert browser.get(f"{page}/me").json()["user_key"] == "cli_alice"
        chat.stdin.write("/quit\n")
        chat.stdin.flush()
        assert chat.wait(timeout=60) == 0
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
