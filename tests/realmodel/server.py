"""Start the real llama.cpp server on 127.0.0.1 with SmolLM2 (built by build_server.py)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.harness import free_port
from tests.realmodel.build_server import TEMPLATE, BuildError, build_server, fetch_model

# Small enough that a long conversation outgrows it (the bot must handle that), large
# enough for the bot's own prompt: system text, tool schemas, a message, a reply.
CONTEXT = 2048


@dataclass
class LlamaServer:
    """One ``llama-server`` process: one slot, one thread (steady on a busy machine)."""

    context: int = CONTEXT
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    args: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible address (what PCAI_LLM_BASE_URL takes)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, log: Path, timeout: float = 120) -> None:
        """Build or find the binary and the model, start the server, wait until it is ready."""
        binary, model = build_server(), fetch_model()
        self.port = self.port or free_port()
        self.log = log
        self.args = [
            str(binary),
            *("-m", str(model), "--host", "127.0.0.1", "--port", str(self.port)),
            *("-c", str(self.context), "-np", "1", "-t", "1", "--jinja"),
            *("--chat-template-file", str(TEMPLATE), "--alias", "smollm2"),
        ]
        with log.open("wb") as out:
            self.proc = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BuildError(f"llama-server exited ({self.proc.returncode}): {self.tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        self.stop()
        raise BuildError(f"llama-server was not ready within {timeout:g} s: {self.tail()}")

    def props(self) -> dict[str, object]:
        """The server's /props (its n_ctx among them)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/props", timeout=5) as resp:
            return dict(json.load(resp))

    def tail(self) -> str:
        """The last lines the server wrote."""
        if self.log is None or not self.log.exists():
            return ""
        return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-5:])

    def stop(self) -> None:
        """Stop the server."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
