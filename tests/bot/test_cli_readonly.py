"""A read-only data dir: `pcai run`, `search` and `remember` say so in one `pcai:` line, exit 1.

The data dir is made read-only for real: a read-only bind mount in a user and mount namespace
of the command's own (``unshare -rm``, no privileges needed), so it holds for root as well.
They printed 25-31 line tracebacks before.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pcai_on_read_only(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``pcai ARGS`` with ``data`` (which must exist) mounted read-only."""
    script = (
        f'mount --bind "{data}" "{data}" && mount -o remount,ro,bind "{data}" '
        '&& exec "$0" -m bot.cli "$@"'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PCAI_", "TELEGRAM_"))}
    env.update(PCAI_DATA_DIR=str(data), PYTHONPATH=str(ROOT))
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("run",),
        ("search", "--user", "cli_me", "tea"),
        ("remember", "--user", "cli_me", "I drink green tea"),
    ],
)
def test_a_read_only_data_dir_is_one_line_and_exit_1(tmp_path: Path, args: tuple[str]) -> None:
    data = tmp_path / "botmemory"
    data.mkdir()
    done = pcai_on_read_only(data, *args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith("pcai: "), done.stderr
    assert "cannot be written" in lines[0] and str(data) in lines[0]
    assert list(data.iterdir()) == []  # and nothing was written
