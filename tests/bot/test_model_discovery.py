"""With no model server set, PCAI finds the one the person already runs (issue 30).

The places asked are injected (``PCAI_LLM_DISCOVER``) so that no test touches the real
11434 or 8080: the fakes of tests/fakes, speaking real HTTP on 127.0.0.1, stand in for Ollama
and for llama.cpp's server; ``127.0.0.1:9`` is a place where nothing answers.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.doctor import run_checks
from bot.model_backends import BACKENDS, model_backend, model_server
from bot.model_discovery import discover
from bot.settings import Settings, load_settings
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.openai_server import FakeOpenAI

NOWHERE = "127.0.0.1:9"  # nothing answers here
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A stand-in for llama-server on a free port of 127.0.0.1."""
    server = FakeOpenAI(model="smollm2")
    yield server
    server.stop()


def _place(url: str) -> str:
    """``127.0.0.1:<port>`` of a fake's address."""
    return url.split("://", 1)[1].split("/", 1)[0]


def _settings(tmp_path: Path, **env: str) -> Settings:
    return load_settings({"PCAI_DATA_DIR": str(tmp_path / "botmemory"), **env})


def test_the_terminal_chat_finds_the_running_llama_server_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_openai: FakeOpenAI,
) -> None:
    monkeypatch.setenv("PCAI_LLM_DISCOVER", f"{NOWHERE},{_place(fake_openai.url)}")
    monkeypatch.setenv("PCAI_WEB_ENABLED", "false")
    fake_openai.queue_chat("Hello from the server you already run.")
    monkeypatch.setattr("sys.stdin", io.StringIO("hi there\n/quit\n"))
    assert main(["chat", "--user", "ann"]) == 0
    out, err = capsys.readouterr()
    said = [line for line in err.splitlines() if line.startswith("Model server:")]
    assert said == [
        f"Model server: an OpenAI-compatible server at {fake_openai.url}, model smollm2 "
        "(found running; PCAI_LLM_BACKEND names another)"
    ], err
    assert "Hello from the server you already run." in out
    assert "Chat needs" not in out + err
    assert [b["messages"][-1]["role"] for b in fake_openai.requests] == ["user"]


def test_the_first_place_that_answers_is_used_ollama_by_its_own_api(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_ollama: FakeOllama
) -> None:
    ollama, llama = _place(fake_ollama.url), _place(fake_openai.url)
    found = discover(_settings(tmp_path, PCAI_LLM_DISCOVER=f"{NOWHERE} {ollama} {llama}"))
    assert model_backend(found.settings) is BACKENDS["ollama"]
    assert found.settings.ollama_host == fake_ollama.url
    assert found.line.startswith(f"Model server: Ollama at {fake_ollama.url}, model qwen2.5:7b")

    found = discover(_settings(tmp_path, PCAI_LLM_DISCOVER=f"{llama} {ollama}"))
    assert model_backend(found.settings) is BACKENDS["openai"]
    assert (found.settings.llm_base_url, found.settings.chat_model) == (fake_openai.url, "smollm2")


def test_an_ollama_without_the_model_says_what_to_pull(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    fake_ollama.models = ["llama3.1:8b"]
    found = discover(_settings(tmp_path, PCAI_LLM_DISCOVER=_place(fake_ollama.url)))
    assert "model qwen2.5:7b (not pulled yet: `ollama pull qwen2.5:7b`)" in found.line


@pytest.mark.parametrize(
    ("said", "backend"),
    [
        ({"PCAI_LLM_BACKEND": "ollama"}, "ollama"),
        ({"OLLAMA_HOST": "http://127.0.0.1:9"}, "ollama"),
        ({"PCAI_LLM_BASE_URL": "http://127.0.0.1:9/v1"}, "openai"),
    ],
)
def test_settings_that_name_a_server_win_over_what_runs(
    tmp_path: Path, fake_openai: FakeOpenAI, said: dict[str, str], backend: str
) -> None:
    settings = _settings(tmp_path, PCAI_LLM_DISCOVER=_place(fake_openai.url), **said)
    found = discover(settings)
    assert found.settings == settings and found.line == ""
    assert model_backend(settings) is BACKENDS[backend]
    assert fake_openai.requests == []


def test_when_none_answers_one_sentence_names_what_to_start(tmp_path: Path) -> None:
    settings = _settings(tmp_path, PCAI_LLM_DISCOVER=f"{NOWHERE} 127.0.0.1:1")
    found = discover(settings)
    line = found.line
    assert line.count(". ") == 0 and line.endswith("."), line
    for command in (
        "`ollama serve`",
        "`ollama pull qwen2.5:7b`",
        "`make llama-server`",
        "`lms server start`",
        "`vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser "
        "hermes`",
    ):
        assert command in line, (command, line)
    assert "127.0.0.1:9, 127.0.0.1:1" in line
    # The chat says the same when asked (not "Chat needs Ollama"), in the reader's language.
    server = model_server(found.settings)
    assert server.down("en") == line
    assert "`make llama-server`" in server.down("zh") and server.down("zh") != line
    # And pcai doctor's model line.
    rows = {r.check: r for r in run_checks(found.settings)}
    assert (rows["model server"].status, rows["model server"].detail) == ("fail", line)


def test_the_doctor_says_which_server_it_found(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    settings = _settings(tmp_path, PCAI_LLM_DISCOVER=f"{NOWHERE} {_place(fake_openai.url)}")
    rows = {r.check: r for r in run_checks(settings)}
    assert rows["model server"].status == "ok", rows["model server"]
    assert rows["model server"].detail == (
        f"an OpenAI-compatible server at {fake_openai.url}, model smollm2 present "
        "(found running: no PCAI_LLM_BACKEND set)"
    )


@pytest.mark.parametrize("command", ["chat", "run"])
def test_with_no_server_found_the_start_says_one_sentence_and_no_warning(
    clean_environment: Path, command: str
) -> None:
    # Was: a log warning "the model's context length unknown (Ollama is not reachable ...)"
    # before the sentence that already says what to start (the context asked of the default
    # backend that discovery had just found absent).
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PCAI_LLM_DISCOVER": f"{NOWHERE} 127.0.0.1:1",
        "PCAI_WEB_ENABLED": "false",
        "PCAI_USER": "cli_ann",
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", command],
        input="/remember I take my tea with milk\n/quit\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert said.count("No model server answers at 127.0.0.1:9, 127.0.0.1:1") == 1, said
    assert "WARNING" not in done.stderr and "context length" not in said, done.stderr
    assert "Remembered: I take my tea with milk" in done.stdout  # the chat itself worked
