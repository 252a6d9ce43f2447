"""``pcai chat`` against the real llama.cpp server (issue 28, item 6).

The terminal takes the backend the settings name, as Telegram does: with
``PCAI_LLM_BACKEND=openai`` it talks to llama-server and never asks Ollama (which is not
running here). The small model's answer is not judged; that it came from the server is.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.harness import ROOT
from tests.realmodel.server import LlamaServer


def test_the_terminal_chat_answers_from_llama_server(llama: LlamaServer, tmp_path: Path) -> None:
    assert llama.log is not None
    before = _served(llama.log)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PCAI_", "TELEGRAM_"))}
    data = tmp_path / "botmemory"
    env.update(
        OLLAMA_HOST="http://127.0.0.1:9",  # nothing answers there
        PCAI_LLM_BACKEND="openai",
        PCAI_LLM_BASE_URL=llama.base_url,
        PCAI_CHAT_MODEL="smollm2",
        PCAI_REPLY_TOKENS="64",  # the small model's answers are not judged: keep them short
        PCAI_WEB_ENABLED="false",
        PCAI_DATA_DIR=str(data),
        PCAI_LOG_LEVEL="INFO",
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "chat", "--user", "ann"],
        input="Hello! What is the capital of France?\n/quit\n",
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "Chat needs" not in said and "still does not answer" not in said, said
    # The server itself logged the chat it answered: the bot's whole prompt, not a probe.
    served = _served(llama.log)[len(before) :]
    assert served and max(served) > 500, (served, said)
    session = json.loads((data / "history" / "cli_ann.json").read_text("utf-8"))
    roles = [(m["role"], m["content"]) for m in session["messages"]]
    assert roles[0] == ("user", "Hello! What is the capital of France?"), roles
    assert roles[-1][0] == "assistant" and roles[-1][1].strip(), roles
    first_line = roles[-1][1].strip().splitlines()[0]
    assert first_line in done.stdout  # the answer the terminal printed


def _served(log: Path) -> list[int]:
    """The prompt size of each request llama-server finished, from its own log."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return [int(n) for n in re.findall(r"prompt eval time = .*?/\s*(\d+) tokens", text)]


def test_the_doctor_reads_the_real_servers_tool_support(
    llama: LlamaServer, tmp_path: Path
) -> None:
    from bot.doctor import run_checks
    from bot.settings import load_settings

    caps = llama.props().get("chat_template_caps")
    assert (
        isinstance(caps, dict) and caps.get("supports_tools") is True
    )  # --jinja, a tools template
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "PCAI_LLM_BACKEND": "openai",
            "PCAI_LLM_BASE_URL": llama.base_url,
            "PCAI_CHAT_MODEL": "smollm2",
            "PCAI_REPLY_TOKENS": "64",
        }
    )
    tools = {r.check: r for r in run_checks(settings)}["tools"]
    assert (tools.status, tools.detail) == (
        "ok",
        "a chat offering a tool was accepted (the template calls tools)",
    )
