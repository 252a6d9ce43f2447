"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from memory.errors import CorruptFileError, UnreadableFileError


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder, fsync, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def append_text(path: Path, text: str) -> None:
    """Append ``text`` and fsync; appends of whole lines never lose earlier content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def read_text(path: Path) -> str:
    """Return the file's text, or an empty string when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as exc:
        # Never guess an encoding: a rewrite would then replace what a person typed.
        line = exc.object[: exc.start].count(b"\n") + 1
        raise CorruptFileError(path, exc.start, line) from exc
    except OSError as exc:  # no permission, a folder where a file should be, an I/O error
        raise UnreadableFileError(path, f"cannot be read ({exc.strerror or exc})") from exc


def file_stamp(path: Path) -> tuple[int, int, int, int]:
    """What changes whenever ``path`` is rewritten: for caches that skip an unchanged file.

    ``(mtime, size)`` alone misses a second writer within one coarse timestamp tick that
    leaves the size as it was; an atomic write always brings a new inode, and any write or
    ``utime`` moves the ctime. ``(0, 0, 0, 0)`` when the file does not exist.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return (0, 0, 0, 0)
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _fsync_dir(folder: Path) -> None:
    # The rename itself is durable only once the directory entry is flushed.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
