"""``pcai doctor``: one line per check, a non-zero exit when something is broken."""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.cli import main
from bot.doctor import run_doctor
from bot.settings import Settings, load_settings
from tests.fakes.ollama_server import FakeOllama

CHECKS = (
    "data dir",
    "sqlite",
    "pcai.db",
    "tokenizer",
    "embedder",
    "model server",
    "context",
    "tools",
    "memory page",
    "telegram",
)
TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(tmp_path: Path, **env: str) -> Settings:
    """Settings on ``tmp_path`` whose page port is free (unless ``env`` names one)."""
    port = str(_closed_port())
    return load_settings(
        {"PCAI_DATA_DIR": str(tmp_path / "botmemory"), "PCAI_WEB_PORT": port, **env}
    )


def _doctor(settings: Settings) -> tuple[int, dict[str, str], list[str]]:
    lines: list[str] = []
    code = run_doctor(settings, lines.append)
    by_check = {}
    for line in lines[:-1]:
        status, rest = line.split(maxsplit=1)
        name, detail = rest.split(": ", 1)
        by_check[name] = f"{status} {detail}"
    return code, by_check, lines


def test_everything_ok(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    settings = _settings(
        tmp_path,
        OLLAMA_HOST=fake_ollama.url,
        TELEGRAM_BOT_TOKEN=TOKEN,
        PCAI_ALLOWED_USERS="42",
    )
    code, checks, lines = _doctor(settings)
    assert code == 0, lines
    assert tuple(checks) == CHECKS and len(lines) == len(CHECKS) + 1
    assert all(v.startswith("ok ") for v in checks.values()), lines
    assert "qwen2.5:7b present" in checks["model server"]
    assert "8192 tokens (sent as num_ctx) of the model's 32768" in checks["context"]
    assert checks["tools"] == "ok the model takes tools"
    assert "384 dimensions" in checks["embedder"]
    assert "cl100k" in checks["tokenizer"]
    assert lines[-1] == "all checks passed"
    assert TOKEN not in "\n".join(lines)
    assert [r.path for r in fake_ollama.requests] == ["/api/tags", "/api/show"]


def test_failures_are_one_line_each_and_exit_non_zero(tmp_path: Path) -> None:
    settings = _settings(tmp_path, OLLAMA_HOST=f"http://127.0.0.1:{_closed_port()}")
    code, checks, lines = _doctor(settings)
    assert code == 1
    assert tuple(checks) == CHECKS and len(lines) == len(CHECKS) + 1
    assert checks["model server"].startswith("FAIL ") and "not reachable" in checks["model server"]
    # One cause, one FAIL: the lines that need the server say they could not ask it.
    assert checks["context"].startswith("skip the model server could not be asked")
    assert checks["sqlite"].startswith("ok ") and checks["data dir"].startswith("ok ")
    assert lines[-1] == "1 check(s) failed"
    assert all("\n" not in line and "Traceback" not in line for line in lines)


def test_a_terminal_only_install_skips_telegram_and_passes(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    code, checks, lines = _doctor(_settings(tmp_path, OLLAMA_HOST=fake_ollama.url))
    assert code == 0, lines
    assert checks["telegram"] == "skip TELEGRAM_BOT_TOKEN is not set: a terminal-only install"
    assert lines[-2].startswith("skip  telegram: ")
    assert [v.split()[0] for v in checks.values()] == ["ok"] * 9 + ["skip"]
    assert lines[-1] == "all checks passed, 1 skipped"


def test_missing_chat_model_is_named(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.models = ["mxbai-embed-large:latest"]
    code, checks, _ = _doctor(_settings(tmp_path, OLLAMA_HOST=fake_ollama.url))
    assert code == 1
    assert checks["model server"].startswith("FAIL ")
    assert "ollama pull qwen2.5:7b" in checks["model server"]


@pytest.mark.parametrize("mode", ["status", "garbage"])
def test_broken_ollama_answers_are_one_line(
    tmp_path: Path, fake_ollama: FakeOllama, mode: str
) -> None:
    if mode == "status":
        fake_ollama.fail_status = 500
    else:
        fake_ollama.fail_garbage = True
    code, checks, _ = _doctor(_settings(tmp_path, OLLAMA_HOST=fake_ollama.url))
    line = checks["model server"]
    assert code == 1 and line.startswith("FAIL ") and "/api/tags" in line


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"TELEGRAM_BOT_TOKEN": "not-a-token"}, "does not look like"),
        ({"TELEGRAM_BOT_TOKEN": TOKEN}, "PCAI_ALLOWED_USERS"),
    ],
)
def test_telegram_checks(tmp_path: Path, env: dict[str, str], needle: str) -> None:
    _, checks, _ = _doctor(_settings(tmp_path, **env))
    assert checks["telegram"].startswith("FAIL ") and needle in checks["telegram"]
    assert "AAHdq" not in checks["telegram"]


def test_unwritable_data_dir_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    settings = load_settings({"PCAI_DATA_DIR": str(blocker / "botmemory")})
    _, checks, _ = _doctor(settings)
    assert checks["data dir"].startswith("FAIL ")


def test_pcai_doctor_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("PCAI_WEB_PORT", str(_closed_port()))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(CHECKS) + 1
    assert [line.split(":")[0].split(maxsplit=1)[1] for line in out[:-1]] == list(CHECKS)
    assert out[-1] == "1 check(s) failed"


def test_pcai_doctor_json_is_one_object_per_check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fake_ollama: FakeOllama
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("PCAI_WEB_PORT", str(_closed_port()))
    assert main(["doctor", "--json"]) == 0  # terminal-only: Telegram skipped
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["check"] for r in rows] == list(CHECKS)
    assert [r["status"] for r in rows] == ["ok"] * 9 + ["skip"]
    assert "qwen2.5:7b present" in rows[5]["detail"]
    fake_ollama.models = ["mxbai-embed-large:latest"]
    assert main(["doctor", "--json"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["check"], r["status"]) for r in rows if r["status"] != "ok"] == [
        ("model server", "fail"),
        ("context", "skip"),
        ("tools", "skip"),
        ("telegram", "skip"),
    ]


def test_a_num_ctx_over_what_the_model_takes_fails(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    fake_ollama.context_length = 4096
    settings = _settings(tmp_path, OLLAMA_HOST=fake_ollama.url, PCAI_CONTEXT_TOKENS="8192")
    _, checks, _ = _doctor(settings)
    assert checks["context"].startswith("FAIL PCAI_CONTEXT_TOKENS is 8192")
    assert "takes at most 4096" in checks["context"]
    _, checks, _ = _doctor(_settings(tmp_path, OLLAMA_HOST=fake_ollama.url))
    assert checks["context"].startswith("ok 4096 tokens (sent as num_ctx) of the model's 4096")
    small = _settings(tmp_path, OLLAMA_HOST=fake_ollama.url, PCAI_CONTEXT_TOKENS="2048")
    _, checks, _ = _doctor(small)
    assert re.fullmatch(
        r"FAIL PCAI_CONTEXT_TOKENS is 2048; PCAI needs at least \d+ \(the rules, the tools, a "
        r"message and 1024 for the reply\): set PCAI_CONTEXT_TOKENS=4096, or set "
        r"PCAI_REPLY_TOKENS=\d+ or lower",
        checks["context"],
    )


def test_a_model_without_tools_fails_the_tools_line(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    fake_ollama.capabilities = ("completion",)
    code, checks, _ = _doctor(_settings(tmp_path, OLLAMA_HOST=fake_ollama.url))
    assert code == 1 and checks["tools"].startswith("FAIL qwen2.5:7b does not take tools")


def test_an_openai_compatible_server_gets_the_same_lines(tmp_path: Path) -> None:
    from tests.fakes.openai_server import FakeOpenAI

    fake = FakeOpenAI(model="qwen2.5-7b-instruct", n_ctx=3072)
    try:
        settings = _settings(
            tmp_path,
            PCAI_LLM_BACKEND="openai",
            PCAI_LLM_BASE_URL=fake.url,
            PCAI_CHAT_MODEL="qwen2.5-7b-instruct",
            PCAI_LLM_API_KEY="sk-secret-key-123",
        )
        code, checks, lines = _doctor(settings)
        assert code == 0, lines
        assert checks["model server"].startswith("ok OpenAI-compatible at http://127.0.0.1:")
        assert (
            checks["context"] == "warn 3072 tokens of context: prompts keep little history "
            "(8192 is comfortable)"
        )
        assert checks["tools"] == "ok a chat offering a tool was accepted"
        assert fake.requests[-1]["tools"][0]["function"]["name"] == "ping"
        assert "sk-secret" not in "\n".join(lines)
        fake.fail_status = 500  # llama.cpp without --jinja: "tools param requires --jinja flag"
        _, checks, _ = _doctor(settings)
        assert checks["tools"].startswith("FAIL a chat offering a tool was refused")
    finally:
        fake.stop()


class _OtherProgram(BaseHTTPRequestHandler):
    """Some other web server on the page's port (not PCAI)."""

    def do_GET(self) -> None:
        body = b"<svg>not PCAI</svg>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


def test_the_memory_page_line_says_whether_its_port_is_free(tmp_path: Path) -> None:
    port = _closed_port()
    _, checks, _ = _doctor(_settings(tmp_path, PCAI_WEB_PORT=str(port)))
    assert checks["memory page"] == f"ok 127.0.0.1:{port} is free for the page"
    other = ThreadingHTTPServer(("127.0.0.1", 0), _OtherProgram)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        taken = str(other.server_address[1])
        _, checks, _ = _doctor(_settings(tmp_path, PCAI_WEB_PORT=taken))
    finally:
        other.shutdown()
        other.server_close()
    assert checks["memory page"] == (
        f"warn another program listens on 127.0.0.1:{taken}: pcai run would start without "
        "the memory page (/web gives no link); stop that program or set PCAI_WEB_PORT to a "
        "free port (or PCAI_WEB_ENABLED=false to run without the page)"
    )


def test_the_memory_page_line_for_a_page_turned_off_or_an_address_not_here(
    tmp_path: Path,
) -> None:
    _, checks, _ = _doctor(_settings(tmp_path, PCAI_WEB_ENABLED="false"))
    assert checks["memory page"] == "skip PCAI_WEB_ENABLED is false: no memory page"
    _, checks, _ = _doctor(_settings(tmp_path, PCAI_WEB_HOST="192.0.2.1"))  # TEST-NET-1
    line = checks["memory page"]
    assert line.startswith("warn pcai run cannot listen on 192.0.2.1:") and "PCAI_WEB_PORT" in line


def test_a_llama_server_whose_template_cannot_call_tools_fails_the_tools_line(
    tmp_path: Path,
) -> None:
    from tests.fakes.openai_server import FakeOpenAI

    fake = FakeOpenAI(model="smollm2")
    fake.supports_tools = False  # /props: chat_template_caps.supports_tools false
    try:
        settings = _settings(tmp_path, PCAI_LLM_BACKEND="openai", PCAI_LLM_BASE_URL=fake.url)
        code, checks, lines = _doctor(settings)
        assert code == 1, lines
        assert checks["model server"].startswith("ok OpenAI-compatible"), lines
        tools = checks["tools"]
        assert tools.startswith("FAIL the chat template of smollm2 has no tools"), tools
        assert "supports_tools: false" in tools and "--jinja" in tools
        assert "template that calls tools" in tools
        assert lines[-1] != "all checks passed"
        fake.supports_tools = True  # a template that takes tools passes, and says so
        code, checks, lines = _doctor(settings)
        assert checks["tools"] == (
            "ok a chat offering a tool was accepted (the template calls tools)"
        ), lines
    finally:
        fake.stop()
