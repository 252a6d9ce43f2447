"""Atomic writes: a crash between the temp write and the rename leaves the old file whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory.base import fsutil
from memory.base.fsutil import append_text, atomic_write_text, read_text


def test_write_then_read(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "MEMORY.md"
    atomic_write_text(target, "# MEMORY\n\n- 咖啡 coffee\n")
    assert read_text(target) == "# MEMORY\n\n- 咖啡 coffee\n"
    atomic_write_text(target, "new")
    assert read_text(target) == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["MEMORY.md"]


def test_crash_before_rename_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "MEMORY.md"
    atomic_write_text(target, "old content 舊內容\n")

    def crash(src: str, dst: str) -> None:
        assert Path(src).read_text(encoding="utf-8") == "new content"  # the temp was written
        raise OSError("simulated crash between temp write and rename")

    monkeypatch.setattr(fsutil.os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        atomic_write_text(target, "new content")
    assert target.read_text(encoding="utf-8") == "old content 舊內容\n"
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]  # no temp file left behind


def test_interrupt_during_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "MEMORY.md"
    atomic_write_text(target, "old")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "x" * 100_000)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_append_keeps_earlier_lines(tmp_path: Path) -> None:
    log = tmp_path / "memory" / "2026-11-22.md"
    append_text(log, "- 10:00:00 user: 一\n")
    append_text(log, "- 10:00:01 user: two\n")
    assert read_text(log).splitlines() == ["- 10:00:00 user: 一", "- 10:00:01 user: two"]


def test_read_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_text(tmp_path / "nope.md") == ""


def test_newlines_are_written_as_lf(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    atomic_write_text(target, "a\nb\n")
    assert target.read_bytes() == b"a\nb\n"
    assert os.stat(target).st_size == 4


def test_a_file_that_is_not_utf8_is_a_clear_error_and_stays_untouched(
    tmp_path: Path,
) -> None:
    import memory
    from memory.errors import CorruptFileError, MemoryStoreError

    library = memory.open(tmp_path / "data")
    try:
        md = library.service.paths("cli_bob").memory_md
        md.parent.mkdir(parents=True)
        raw = b"# MEMORY\n\n- caf\xe9 latin-1 bytes\n"
        md.write_bytes(raw)
        with pytest.raises(CorruptFileError, match="not valid UTF-8") as err:
            read_text(md)
        assert isinstance(err.value, MemoryStoreError)
        with pytest.raises(CorruptFileError):
            library.service.remember("cli_bob", "a new memory that must not clobber the file")
        assert md.read_bytes() == raw
    finally:
        library.close()
