"""A model server whose context cannot hold a turn is refused at start and by ``pcai doctor``.

llama-server started with ``-c 256`` reports ``n_ctx`` 256 on ``/props``: with the rules, the
tools and 1024 tokens kept for the reply, every message would be cut to nothing. The bot does
not start on it, and the doctor fails, each with the one line saying what to set.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.doctor import run_doctor
from bot.settings import load_settings
from tests.fakes.openai_server import FakeOpenAI

# The one line, for a server that says n_ctx 256 and the default reply room.
LINE = re.compile(
    r"the server's context is 256 tokens; PCAI needs at least (\d+) \(the rules, the tools, "
    r"a message and 1024 for the reply\): start llama-server with -c 4096 "
    r"\(vLLM: --max-model-len 4096\)"
)


@pytest.fixture
def tiny_server() -> Iterator[FakeOpenAI]:
    """llama-server started with ``-c 256``."""
    server = FakeOpenAI(model="qwen2.5-7b-instruct", n_ctx=256)
    yield server
    server.stop()


@pytest.fixture
def environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_server: FakeOpenAI) -> Path:
    """The process's settings: the OpenAI-compatible backend on the tiny server."""
    data = tmp_path / "botmemory"
    monkeypatch.setenv("PCAI_DATA_DIR", str(data))
    monkeypatch.setenv("PCAI_LLM_BACKEND", "openai")
    monkeypatch.setenv("PCAI_LLM_BASE_URL", tiny_server.url)
    monkeypatch.setenv("PCAI_CHAT_MODEL", "qwen2.5-7b-instruct")
    monkeypatch.setenv("PCAI_WEB_ENABLED", "false")
    return data


@pytest.mark.parametrize("command", [["run"], ["chat"]])
def test_a_256_token_context_is_refused_at_start_with_one_line(
    environ: Path,
    tiny_server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("hello\n/quit\n"))
    assert main(command) == 1
    out, err = capsys.readouterr()
    said = [line.removeprefix("pcai: ") for line in err.splitlines() if line.startswith("pcai")]
    assert len(said) == 1, err
    line = LINE.fullmatch(said[0])
    assert line is not None and int(line.group(1)) > 1024, err
    assert not tiny_server.requests  # no message was sent to it (as '')
    assert "PCAI terminal chat" not in out


def test_doctor_fails_the_context_line_with_what_to_set(
    tmp_path: Path, tiny_server: FakeOpenAI
) -> None:
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "PCAI_LLM_BACKEND": "openai",
            "PCAI_LLM_BASE_URL": tiny_server.url,
            "PCAI_CHAT_MODEL": "qwen2.5-7b-instruct",
            "PCAI_WEB_ENABLED": "false",
        }
    )
    lines: list[str] = []
    assert run_doctor(settings, lines.append) == 1
    (context,) = [line for line in lines if "context:" in line]
    failed = re.fullmatch(r"FAIL +context: (.*)", context)
    assert failed is not None and LINE.fullmatch(failed.group(1)), context


def test_a_smaller_reply_room_is_offered_when_it_would_fit(
    environ: Path, tiny_server: FakeOpenAI
) -> None:
    tiny_server.n_ctx = 2048  # the rules, the tools and a message fit; 1024 for the reply not
    settings = load_settings(dict(os.environ))
    lines: list[str] = []
    assert run_doctor(settings, lines.append) == 1
    (context,) = [line for line in lines if "context:" in line]
    found = re.search(r"--max-model-len 4096\), or set PCAI_REPLY_TOKENS=(\d+) or lower$", context)
    assert found is not None, context
    reply = found.group(1)
    roomy = load_settings({**os.environ, "PCAI_REPLY_TOKENS": reply})
    lines.clear()
    run_doctor(roomy, lines.append)
    (context,) = [line for line in lines if "context:" in line]
    assert not context.startswith("FAIL"), context  # the setting it names does fit
