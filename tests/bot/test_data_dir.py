"""The data folder is one place wherever `pcai` runs, and a command that creates it says so;
what the operator commands write there (a section given as a heading)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_is_the_xdg_data_folder() -> None:
    assert load_settings({"HOME": "/home/ann"}).data_dir == Path("/home/ann/.local/share/pcai")
    xdg = {"HOME": "/home/ann", "XDG_DATA_HOME": "/srv/data"}
    assert load_settings(xdg).data_dir == Path("/srv/data/pcai")
    relative = {"HOME": "/home/ann", "XDG_DATA_HOME": "data"}  # the XDG rule: ignored
    assert load_settings(relative).data_dir == Path("/home/ann/.local/share/pcai")
    assert load_settings({"PCAI_DATA_DIR": "/var/lib/pcai"}).data_dir == Path("/var/lib/pcai")


def pcai(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``pcai args`` in a real process from ``cwd`` with ``home`` and no PCAI_DATA_DIR."""
    env = {k: v for k, v in os.environ.items() if k not in ("PCAI_DATA_DIR", "XDG_DATA_HOME")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(home), PCAI_USER="cli_ann")
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_commands_from_two_folders_share_one_data_folder(tmp_path: Path) -> None:
    home, here, there = tmp_path / "home", tmp_path / "here", tmp_path / "there"
    for folder in (home, here, there):
        folder.mkdir()
    data = home / ".local" / "share" / "pcai"
    first = pcai(here, home, "remember", "I drink oolong tea every morning")
    assert first.returncode == 0, first.stderr
    assert first.stderr == f"New data folder: {data} (PCAI_DATA_DIR sets another)\n"
    found = pcai(there, home, "search", "oolong tea")
    assert (found.returncode, found.stderr) == (0, "")  # not new any more: nothing said
    assert "I drink oolong tea every morning" in found.stdout
    assert not (here / "botmemory").exists() and not (there / "botmemory").exists()
    assert (data / "users" / "cli_ann" / "MEMORY.md").exists()


def test_the_service_unit_sets_its_own_data_folder() -> None:
    unit = (ROOT / "deploy" / "pcai.service").read_text(encoding="utf-8").splitlines()
    assert "Environment=PCAI_DATA_DIR=/var/lib/pcai" in unit
    assert "ReadWritePaths=/var/lib/pcai" in unit  # the one folder it may write


def test_a_section_given_as_a_heading_is_named_once(tmp_path: Path) -> None:
    import memory

    with memory.open(tmp_path / "data") as m:
        entry = m.remember("cli_ann", "My bike is red", section="## Evil")
    md = (tmp_path / "data" / "users" / "cli_ann" / "MEMORY.md").read_text(encoding="utf-8")
    assert entry.section == "Evil"
    assert "## Evil" in md and "## ## Evil" not in md


def test_a_folder_another_process_makes_at_the_same_moment_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two commands started together on a new folder: both saw it missing, the other made it
    # first. Was: "pcai: [Errno 17] File exists" and exit 1 (a fresh-clone CI run of
    # tests/trust/test_writers.py hit it with two real processes).
    data = tmp_path / "botmemory"
    data.mkdir()  # what the other process just did, after this one looked
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda p: p != data and real_exists(p))
    monkeypatch.setenv("PCAI_DATA_DIR", str(data))
    monkeypatch.setenv("PCAI_USER", "cli_ann")
    assert main(["remember", "I drink oolong tea every morning"]) == 0
    assert "File exists" not in capsys.readouterr().err
    assert "oolong" in (data / "users" / "cli_ann" / "MEMORY.md").read_text(encoding="utf-8")
