"""The real bot process over the OpenAI-compatible backend, pointed at the real llama.cpp server.

Its output goes to a file the test reads: each model call logs the server's own counts
(``openai smollm2: prompt 812 tokens (640 cached), reply 41, first token 230 ms``).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.harness import ROOT, Emulator, bot_env
from tests.realmodel.server import LlamaServer

CALL_LINE = re.compile(
    r"openai \S+: prompt (\d+) tokens \((\d+|\?) cached\), reply (\d+|\?)"
    r"(?:, first token (\d+) ms)?"
)


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call as the bot logged it: the server's counts and the first token's delay."""

    prompt: int
    cached: int
    first_token_ms: float | None


@dataclass
class RealBot:
    """``python -m bot.cli run`` with the OpenAI backend; its log in ``log``."""

    emulator: Emulator
    server: LlamaServer
    data_dir: Path
    log: Path
    allowed: str
    proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120, **extra: str) -> None:
        """Start the bot and wait until it polls the Telegram stand-in."""
        env = bot_env(self.emulator, "http://127.0.0.1:9", self.data_dir, self.allowed)
        env.update(
            PCAI_LLM_BACKEND="openai",
            PCAI_LLM_BASE_URL=self.server.base_url,
            PCAI_CHAT_MODEL="smollm2",
            PCAI_REPLY_TOKENS="96",  # the small model's answers are not judged: keep them short
            PCAI_WEB_ENABLED="false",  # the memory page's port may be taken by another run
            **extra,
        )
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "run"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while "PCAI bot started" not in self.text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = " | ".join(self.text().strip().splitlines()[-8:])
                raise AssertionError(f"the bot did not start: {tail}")
            time.sleep(0.2)

    def text(self) -> str:
        """Everything the bot wrote so far."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def calls(self) -> list[ModelCall]:
        """Every model call the bot logged, in order."""
        out = []
        for m in CALL_LINE.finditer(self.text()):
            cached = 0 if m.group(2) == "?" else int(m.group(2))
            first = float(m.group(4)) if m.group(4) else None
            out.append(ModelCall(int(m.group(1)), cached, first))
        return out

    def wait_calls(self, count: int, timeout: float = 300) -> list[ModelCall]:
        """Wait until the bot logged ``count`` model calls."""
        deadline = time.monotonic() + timeout
        while len(self.calls()) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.calls())} of {count} model calls logged")
            time.sleep(0.2)
        return self.calls()

    def stop(self) -> None:
        """SIGTERM, then kill if it lingers."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
