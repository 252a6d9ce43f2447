"""``pcai backup``, ``--verify`` and ``pcai restore`` on a data folder with every kind of data."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import Services, build_services
from bot.backup import snapshots, verify_snapshot
from bot.backup.errors import SnapshotInvalidError
from bot.cli import main
from bot.settings import SettingsError, load_settings
from memory.index.embedders import E5Embedder
from tests.bot.backup.helpers import PEOPLE, fill, markdown_files, memories, reminders


@pytest.fixture
async def filled(services: Services, monkeypatch: pytest.MonkeyPatch) -> Services:
    """The services' data folder with memories, reminders, logs and sessions of two people;
    the ``pcai`` commands pointed at it."""
    await fill(services)
    monkeypatch.setenv("PCAI_DATA_DIR", str(services.settings.data_dir))
    return services


def _one_snapshot(dest: Path) -> Path:
    [snapshot] = snapshots(dest)
    return snapshot


def test_a_snapshot_holds_the_markdown_sessions_and_state_and_not_the_index(
    filled: Services, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "backups"
    assert main(["backup", str(dest)]) == 0
    snapshot = _one_snapshot(dest)
    assert f"backed up {snapshot}: " in capsys.readouterr().out
    data = filled.settings.data_dir
    taken = {p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file()}
    assert "pcai.db" in taken and "manifest.json" in taken
    assert snapshot.stat().st_mode & 0o077 == 0  # nobody else reads people's memories
    assert "users/cli_ann/MEMORY.md" in taken and "history/cli_ann.json" in taken
    assert not any(t.startswith("knowledge/") for t in taken)  # the index is rebuilt
    assert not any(t.endswith(".lock") for t in taken) and "web_secret" not in taken
    copied = {rel: (snapshot / rel).read_bytes() for rel in markdown_files(data)}
    assert copied == markdown_files(data)  # byte for byte
    assert reminders(snapshot, "cli_ann") == ["call the mother of cli_ann"]
    manifest = verify_snapshot(snapshot)
    assert set(manifest.users) == set(PEOPLE)
    assert main(["backup", "--verify", str(snapshot)]) == 0
    assert capsys.readouterr().out.startswith(f"verified {snapshot}: ")


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("flip", "users/cli_ann/MEMORY.md differs from its checksum"),
        ("drop", "users/cli_ann/MEMORY.md is missing"),
        ("extra", "users/cli_ann/stray.md is not in its manifest"),
        ("manifest", "it has no manifest.json"),
    ],
)
def test_verify_names_what_is_wrong_in_one_line(
    filled: Services,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: str,
    said: str,
) -> None:
    dest = tmp_path / "backups"
    assert main(["backup", str(dest)]) == 0
    snapshot = _one_snapshot(dest)
    memory_md = snapshot / "users" / "cli_ann" / "MEMORY.md"
    if damage == "flip":
        raw = bytearray(memory_md.read_bytes())
        raw[-2] ^= 1
        memory_md.write_bytes(bytes(raw))
    elif damage == "drop":
        memory_md.unlink()
    elif damage == "extra":
        (memory_md.parent / "stray.md").write_text("x", encoding="utf-8")
    else:
        (snapshot / "manifest.json").unlink()
    capsys.readouterr()
    assert main(["backup", "--verify", str(snapshot)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pcai: ") and said in err, err
    with pytest.raises(SnapshotInvalidError):
        verify_snapshot(snapshot)


def test_restore_refuses_a_folder_that_holds_anything(
    filled: Services, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "backups"
    assert main(["backup", str(dest)]) == 0
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    capsys.readouterr()
    assert main(["restore", str(_one_snapshot(dest)), "--data", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not empty" in err, err
    assert [p.name for p in target.iterdir()] == ["notes.txt"]  # nothing touched
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_restore_fills_a_new_folder_that_finds_everything(
    filled: Services,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    embedder: E5Embedder,
) -> None:
    source = filled.settings.data_dir
    dest = tmp_path / "backups"
    assert main(["backup", str(dest)]) == 0
    snapshot = _one_snapshot(dest)
    target = tmp_path / "restored"
    capsys.readouterr()
    assert main(["restore", str(snapshot), "--data", str(target)]) == 0
    out, err = capsys.readouterr()
    assert f"restored {target}: " in out and "units indexed" in out
    assert "reindex [##############################]" in err  # `pcai reindex`'s bar
    assert markdown_files(target) == markdown_files(source)  # byte-identical, after reindex
    restored = build_services(load_settings({"PCAI_DATA_DIR": str(target)}), embedder=embedder)
    try:
        for key in PEOPLE:
            assert sorted(memories(target, key)) == sorted(memories(source, key))
            hits = restored.library.search(key, "which train do I take")
            assert hits and "7:40 train" in hits[0].chunk.text
            assert [i.reminder.text for i in restored.reminders.listing(key)] == [  # type: ignore[union-attr]
                f"call the mother of {key}"
            ]
    finally:
        restored.close()


def test_backup_needs_a_folder_and_keep_must_be_one_or_more(
    filled: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backup"]) == 2
    assert "PCAI_BACKUP_DIR" in capsys.readouterr().err
    with pytest.raises(SettingsError, match="PCAI_BACKUP_KEEP"):
        load_settings({"PCAI_BACKUP_KEEP": "0"})
