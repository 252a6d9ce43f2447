"""End-to-end harness: the Telegram stand-in, the real ``pcai run`` process, and test users.

The stand-in (``tests/fakes/telegram_server.py``) is a Bot API on 127.0.0.1; the bot process
polls it exactly as it would poll Telegram (in webhook mode the stand-in posts to it instead),
and talks to a fake Ollama on 127.0.0.1 through the real ``ollama`` client. Users, in private
chats or in groups, are played through its client API.
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
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.telegram_server import BOT_USER, BOT_USERNAME, FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "123456:TEST"
__all__ = [
    "BOT_USERNAME",
    "ROOT",
    "TOKEN",
    "BotProcess",
    "Emulator",
    "Group",
    "Inbox",
    "User",
    "bot_env",
    "free_port",
    "webhook_env",
]


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
    """The Telegram Bot API stand-in on a free port: a thread here, or its own process.

    ``own_process=True`` keeps its HTTP work off this process's GIL (the load benchmark plays
    many users from threads here).
    """

    def __init__(self, *, own_process: bool = False) -> None:
        self.server: FakeTelegram | None = None
        self.proc: subprocess.Popen[str] | None = None
        if own_process:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.fakes.telegram_server", "0"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            self.url = _wait_for_line(self.proc, "listening on", timeout=30)[-1].split()[-1]
        else:
            self.server = FakeTelegram()
            self.url = self.server.url
        self.port = int(self.url.rsplit(":", 1)[1])

    def call(self, path: str, body: dict[str, Any]) -> Any:
        """POST ``body`` to the stand-in's client API and return the decoded JSON."""
        req = urllib.request.Request(
            f"{self.url}/{path.lstrip('/')}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            raise AssertionError(f"/{path.lstrip('/')}: {err.code} {err.read()!r}") from err

    def document(self, file_id: str) -> bytes:
        """The bytes of a file the bot sent (sendDocument), fetched as a client would."""
        with urllib.request.urlopen(f"{self.url}/bot{TOKEN}/getFile?file_id={file_id}") as resp:
            path = json.loads(resp.read())["result"]["file_path"]
        with urllib.request.urlopen(f"{self.url}/file/bot{TOKEN}/{path}") as resp:
            return bytes(resp.read())

    def reset(self) -> None:
        """Forget stored messages, updates, files and the call log."""
        self.call("reset", {})

    def stop(self) -> None:
        """Stop serving (and end the stand-in's process, if it has one)."""
        if self.server is not None:
            self.server.stop()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


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


def webhook_env(port: int, secret: str = "e2e-secret_1") -> dict[str, str]:
    """The settings that make the bot take updates on ``port`` as the stand-in's webhook."""
    return {
        "PCAI_TELEGRAM_WEBHOOK_URL": f"http://127.0.0.1:{port}/telegram",
        "PCAI_TELEGRAM_WEBHOOK_PORT": str(port),
        "PCAI_TELEGRAM_WEBHOOK_SECRET_TOKEN": secret,
    }


class Inbox:
    """The bot's messages in one chat, read through the client API (``inbox`` keeps them)."""

    def __init__(self, emulator: Emulator, chat_id: int) -> None:
        self.emu = emulator
        self.chat_id = chat_id
        self.inbox: list[dict[str, Any]] = []

    def _poll(self) -> list[dict[str, Any]]:
        got = self.emu.call("getUpdates", {"token": TOKEN, "chatId": self.chat_id}) or {}
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
        """Wait for a bot message in this chat that satisfies ``pred``."""
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
        raise AssertionError(
            f"chat {self.chat_id}: no matching bot message in {timeout}s: {texts}"
        )

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


class Group(Inbox):
    """A group (``kind`` "group" or "supergroup") the bot is a member of; reads its messages.

    The stand-in delivers every group message to the bot (privacy mode off), so whether the
    bot answers only when addressed (``@TestNameBot``, a reply, ``/cmd@TestNameBot``) is up to
    the bot.
    """

    def __init__(
        self,
        emulator: Emulator,
        group_id: int = -100_200_300,
        title: str = "Test group",
        kind: str = "group",
    ) -> None:
        super().__init__(emulator, group_id)
        self.id = group_id
        self.chat = {"id": group_id, "type": kind, "title": title}


class User(Inbox):
    """A person chatting with the bot: privately (their inbox is that chat) or in a group."""

    def __init__(
        self,
        emulator: Emulator,
        user_id: int,
        name: str = "Tester",
        *,
        language_code: str | None = None,
    ) -> None:
        super().__init__(emulator, user_id)
        self.id = user_id
        self.name = name
        self.language_code = language_code  # the client's language, as Telegram reports it

    @property
    def _from(self) -> dict[str, Any]:
        sender: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.name}
        if self.language_code is not None:
            sender["language_code"] = self.language_code
        return sender

    @property
    def _chat(self) -> dict[str, Any]:
        return {"id": self.id, "type": "private", "first_name": self.name}

    def send(
        self, text: str, reply_to: dict[str, Any] | None = None, *, group: Group | None = None
    ) -> dict[str, Any]:
        """Send ``text`` (privately, or in ``group``), optionally as a reply to a message there.

        Telegram marks /commands and @mentions itself; returns the Message the bot receives.
        """
        chat = group.chat if group is not None else self._chat
        body: dict[str, Any] = {
            "botToken": TOKEN,
            "from": self._from,
            "chat": chat,
            "date": int(time.time()),
            "text": text,
        }
        if reply_to is not None:
            body["reply_to_message"] = {
                "message_id": reply_to["message_id"],
                "date": int(time.time()),
                "chat": chat,
                "from": dict(reply_to.get("from") or BOT_USER),
                "text": reply_to.get("text", ""),
            }
        return dict(self.emu.call("sendMessage", body)["result"])

    def edit(self, sent: dict[str, Any], text: str) -> dict[str, Any]:
        """Edit a message this user sent (what :meth:`send` returned): an edited_message."""
        body = {
            "botToken": TOKEN,
            "from": self._from,
            "chat": sent["chat"],
            "message_id": sent["message_id"],
            "text": text,
        }
        return dict(self.emu.call("editMessage", body)["result"])

    def press(self, message: dict[str, Any], data: str) -> None:
        """Press the inline button with callback data ``data`` under the bot's ``message``."""
        chat_id = message.get("chat_id", self.id)
        chat = self._chat if chat_id == self.id else {"id": chat_id}
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
                    "chat": chat,
                    "text": message.get("text", ""),
                },
            },
        )
