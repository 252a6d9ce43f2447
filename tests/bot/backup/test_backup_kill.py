"""A backup killed with -9 at random points leaves a whole snapshot or none taken for one."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

from bot.backup import snapshots, verify_snapshot
from bot.backup.snapshot import HIDDEN
from bot.schema import MIGRATIONS_ALL
from memory.base.fsutil import atomic_write_text
from memory.state.statedb import StateDB
from tests.bot.backup.helpers import markdown_files

ROOT = Path(__file__).resolve().parents[3]
BACKUP = "import sys; from bot.cli import main; sys.exit(main(['backup', sys.argv[1]]))"
USERS, DAYS = 30, 40
KILLS = 10


def _data(data_dir: Path) -> None:
    """Enough files that a backup takes a while: 30 people with 40 days of logs each."""
    StateDB(data_dir / "pcai.db", MIGRATIONS_ALL).close()
    for u in range(USERS):
        user = data_dir / "users" / f"cli_p{u}"
        atomic_write_text(user / "MEMORY.md", f"## General\n\n- [m-1-{u}] person {u} likes tea\n")
        for d in range(DAYS):
            lines = "".join(f"- 09:{m:02d} day {d} line {m} of person {u}\n" for m in range(60))
            atomic_write_text(user / "memory" / f"2026-01-{d % 28 + 1:02d}-{d}.md", lines)
        atomic_write_text(data_dir / "history" / f"cli_p{u}.json", f'{{"id": "cli_p{u}"}}\n')


def _start(data_dir: Path, dest: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCAI_")}
    env.update(PCAI_DATA_DIR=str(data_dir), PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", BACKUP, str(dest)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _own_hidden(dest: Path, pid: int) -> Path | None:
    found = [p for p in dest.glob(f"{HIDDEN}*") if p.name.endswith(f".{pid}")]
    return found[0] if found else None


def _until_copying(dest: Path, proc: subprocess.Popen[bytes]) -> float:
    """Wait until ``proc`` has begun its snapshot; the time it began."""
    deadline = time.monotonic() + 120
    while _own_hidden(dest, proc.pid) is None:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.002)
    return time.monotonic()


def test_a_backup_killed_anywhere_is_whole_or_not_there(tmp_path: Path) -> None:
    data_dir, dest = tmp_path / "data", tmp_path / "backups"
    _data(data_dir)
    dest.mkdir()
    full = _start(data_dir, dest)
    began = _until_copying(dest, full)
    assert full.wait(timeout=300) == 0
    copy_seconds = time.monotonic() - began
    assert len(snapshots(dest)) == 1

    rng = random.Random(31)
    cut_mid_copy = 0
    for i in range(KILLS):
        proc = _start(data_dir, dest)
        if i % 3 == 0:  # anywhere, the interpreter's start included
            time.sleep(rng.uniform(0.0, 2.0))
        else:  # inside the snapshot: copying, writing the manifest, renaming
            _until_copying(dest, proc)
            time.sleep(rng.uniform(0.0, copy_seconds * 1.1))
        proc.kill()
        proc.wait(timeout=30)
        if _own_hidden(dest, proc.pid) is not None:
            cut_mid_copy += 1
        for snapshot in snapshots(dest):  # every snapshot with a name is whole
            verify_snapshot(snapshot)
    assert cut_mid_copy >= 3, "the kills never landed inside a snapshot: the test attacks nothing"

    last = _start(data_dir, dest)
    assert last.wait(timeout=300) == 0
    assert list(dest.glob(f"{HIDDEN}*")) == []  # what the killed ones left is gone
    newest = snapshots(dest)[-1]
    verify_snapshot(newest)
    copied = {rel: (newest / rel).read_bytes() for rel in markdown_files(data_dir)}
    assert copied == markdown_files(data_dir)
