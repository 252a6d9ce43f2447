"""End-to-end harness: the Telegram emulator, the real ``pcai run`` process, and test users.

The emulator (``../shared/tools/telegram-emulator``) is a local Bot API on 127.0.0.1; the bot
process polls it exactly as it would poll Telegram, and talks to a fake Ollama on 127.0.0.1
through the real ``ollama`` client. Users are played through the emulator's client API.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The emulator ships beside the project (../shared); TELEGRAM_EMULATOR names it elsewhere.
EMULATOR = Path(
    os.environ.get("TELEGRAM_EMULATOR")
    or ROOT.parent / "shared" / "tools" / "telegram-emulator" / "start.sh"
)
TOKEN = "123456:TEST"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_line(proc: subprocess.Popen[str], needle: str, timeout: float) -> list[str]:
    """Read ``proc``'s stdout until a line contains ``needle``; fail with what was seen."""
    seen: list[str] = []
    done = threading.Event()

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line.rstrip())
            if needle in line:
                done.set()
                break

    threading.Thread(target=reader, daemon=True).start()
    if not done.wait(timeout):
        proc.kill()
        raise RuntimeError(f"did not see {needle!r} within {timeout}s; output: {seen[-20:]}")
    # Keep draining so the child never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in proc.stdout or []], daemon=True).start()
    return seen


class Emulator:
    """The Telegram Bot API emulator as a subprocess on a free port."""

    def __init__(self) -> None:
        if not EMULATOR.exists():
            raise RuntimeError(
                f"the Telegram emulator is missing at {EMULATOR} "
                "(set TELEGRAM_EMULATOR to its start.sh)"
            )
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            ["bash", str(EMULATOR), str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        _wait_for_line(self.proc, "listening on", timeout=240)

    def call(self, path: str, body: dict[str, Any]) -> Any:
        """POST ``body`` to the emulator's client API and return the decoded JSON."""
        req = urllib.request.Request(
            f"{self.url}/{path.lstrip('/')}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read() or b"null")

    def reset(self) -> None:
        """Forget stored messages and the call log."""
        self.call("reset", {})

    def stop(self) -> None:
        """Stop the emulator and its npm/node children."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


@dataclass
class BotProcess:
    """The real bot: ``python -m bot.cli run`` with settings in its environment."""

    env: dict[str, str]
    proc: subprocess.Popen[str] | None = None
    output: list[str] = field(default_factory=list)

    def start(self) -> None:
        """Start the bot and wait until it polls."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "run"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = _wait_for_line(self.proc, "PCAI bot started", timeout=90)

    def terminate(self, timeout: float = 30) -> int:
        """Send SIGTERM and return the exit code."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """Make sure the process is gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def bot_env(emulator: Emulator, ollama_url: str, data_dir: Path, allowed: str) -> dict[str, str]:
    """The environment of a bot process pointed at the emulator and the fake Ollama."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PCAI_", "TELEGRAM_"))}
    env.update(
        TELEGRAM_BOT_TOKEN=TOKEN,
        PCAI_TELEGRAM_BASE_URL=f"{emulator.url}/bot",
        PCAI_TELEGRAM_BASE_FILE_URL=f"{emulator.url}/file/bot",
        OLLAMA_HOST=ollama_url,
        PCAI_ALLOWED_USERS=allowed,
        PCAI_DATA_DIR=str(data_dir),
        PCAI_LOG_LEVEL="INFO",
        PYTHONUNBUFFERED="1",
    )
    return env


class User:
    """A person chatting with the bot through the emulator."""

    def __init__(self, emulator: Emulator, user_id: int, name: str = "Tester") -> None:
        self.emu = emulator
        self.id = user_id
        self.name = name
        self.inbox: list[dict[str, Any]] = []

    @property
    def _from(self) -> dict[str, Any]:
        return {"id": self.id, "is_bot": False, "first_name": self.name}

    @property
    def _chat(self) -> dict[str, Any]:
        return {"id": self.id, "type": "private", "first_name": self.name}

    def send(self, text: str, reply_to: dict[str, Any] | None = None) -> None:
        """Send ``text`` (commands get their bot_command entity), optionally as a reply."""
        body: dict[str, Any] = {
            "botToken": TOKEN,
            "from": self._from,
            "chat": self._chat,
            "date": int(time.time()),
            "text": text,
        }
        if text.startswith("/"):
            length = len(text.split()[0])
            body["entities"] = [{"type": "bot_command", "offset": 0, "length": length}]
        if reply_to is not None:
            body["reply_to_message"] = {
                "message_id": reply_to["message_id"],
                "date": int(time.time()),
                "chat": self._chat,
                "from": {"id": 666, "is_bot": True, "first_name": "Bot"},
                "text": reply_to.get("text", ""),
            }
        self.emu.call("sendMessage", body)

    def press(self, message: dict[str, Any], data: str) -> None:
        """Press the inline button with callback data ``data`` under ``message``."""
        self.emu.call(
            "sendCallback",
            {
                "botToken": TOKEN,
                "from": self._from,
                "date": int(time.time()),
                "data": data,
                "message": {
                    "message_id": message["message_id"],
                    "date": int(time.time()),
                    "chat": self._chat,
                    "text": message.get("text", ""),
                },
            },
        )

    def _poll(self) -> list[dict[str, Any]]:
        got = self.emu.call("getUpdates", {"token": TOKEN, "chatId": self.id}) or {}
        rows = got.get("result", got) if isinstance(got, dict) else got
        out = []
        for row in rows or []:
            msg = dict(row.get("message", {}))
            msg["message_id"] = row.get("messageId", msg.get("message_id"))
            out.append(msg)
        self.inbox.extend(out)
        return out

    def wait_for(
        self, pred: Callable[[dict[str, Any]], bool], timeout: float = 20
    ) -> dict[str, Any]:
        """Wait for a bot message to this user that satisfies ``pred``."""
        deadline = time.monotonic() + timeout
        checked = 0
        while time.monotonic() < deadline:
            self._poll()
            for msg in self.inbox[checked:]:
                if pred(msg):
                    return msg
            checked = len(self.inbox)
            time.sleep(0.05)
        texts = [m.get("text", "")[:80] for m in self.inbox]
        raise AssertionError(f"user {self.id}: no matching bot message in {timeout}s: {texts}")

    def wait_text(self, needle: str, timeout: float = 20) -> dict[str, Any]:
        """Wait for a bot message containing ``needle``."""
        return self.wait_for(lambda m: needle in (m.get("text") or ""), timeout)

    def drain(self, quiet: float = 0.5) -> list[dict[str, Any]]:
        """Collect bot messages until none arrives for ``quiet`` seconds."""
        got: list[dict[str, Any]] = []
        last = time.monotonic()
        while time.monotonic() - last < quiet:
            new = self._poll()
            if new:
                got.extend(new)
                last = time.monotonic()
            time.sleep(0.05)
        return got
