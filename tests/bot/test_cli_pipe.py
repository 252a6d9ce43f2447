"""``pcai … | head``: a reader that leaves early ends the command quietly, exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import memory

ROOT = Path(__file__).resolve().parents[2]


def run_into_closed_pipe(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``pcai args`` in a real process whose stdout is a pipe nobody reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte, like `| head -c 0`
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PCAI_DATA_DIR": str(tmp_path / "data"),
        "OLLAMA_HOST": "http://127.0.0.1:9",  # nothing listens: doctor's check fails fast
        "PCAI_USER": "cli_alice",
    }
    try:
        return subprocess.run(
            [sys.executable, "-m", "bot.cli", *args],
            cwd=tmp_path,
            env=env,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args", [("config",), ("config", "--json"), ("doctor", "--json"), ("search", "--json", "tea")]
)
def test_a_closed_pipe_is_a_quiet_exit(tmp_path: Path, args: tuple[str, ...]) -> None:
    with memory.open(tmp_path / "data") as m:
        m.remember("cli_alice", "I drink oolong tea every morning")
    done = run_into_closed_pipe(tmp_path, *args)
    assert (done.returncode, done.stderr) == (0, "")
