"""A ``pcai.db`` written by a newer PCAI: the command says so in one line and changes nothing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.schema import SHIPPED as MIGRATIONS
from memory.state.migrations import Migration
from memory.state.statedb import StateDB


def _newer(conn: Any) -> None:
    conn.execute("CREATE TABLE work_queue (id INTEGER PRIMARY KEY)")


@pytest.mark.parametrize(
    "argv", [["search", "--user", "cli_alice", "咖啡"], ["run"]], ids=["search", "run"]
)
def test_a_command_on_a_newer_pcai_db_exits_1_with_one_sentence(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in list(os.environ):
        if name.startswith("PCAI_") or name in ("TELEGRAM_BOT_TOKEN", "OLLAMA_HOST"):
            monkeypatch.delenv(name)
    data = tmp_path / "botmemory"
    monkeypatch.setenv("PCAI_DATA_DIR", str(data))
    data.mkdir()
    StateDB(data / "pcai.db", (*MIGRATIONS, Migration("m900_work_queue", _newer))).close()
    digest = hashlib.sha256((data / "pcai.db").read_bytes()).hexdigest()

    code = main(argv)  # "run" without a Telegram token starts the terminal chat

    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    [line] = [ln for ln in err.splitlines() if ln.startswith("pcai: ")]  # run says "No TOKEN.."
    assert "Traceback" not in err
    assert "newer version of PCAI" in line
    assert "m900_work_queue" in line
    assert hashlib.sha256((data / "pcai.db").read_bytes()).hexdigest() == digest
