"""A snapshot's manifest: every file with its size and SHA-256, and the check against it.

The manifest is written last, inside the hidden folder the snapshot is built in, and the
folder gets its visible name only after that: a snapshot that has a name verifies, or it
was changed after it was written (which :func:`verify_snapshot` says in one sentence).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from bot.backup.errors import SnapshotInvalidError

MANIFEST = "manifest.json"
FORMAT = 1
STATE_DB = "pcai.db"
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One file of a snapshot, by its path relative to the data folder."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a snapshot holds: when it was taken, its files, the users and sessions in it."""

    created: str  # ISO 8601, UTC
    files: tuple[FileRecord, ...]
    users: tuple[str, ...]
    sessions: int

    def to_json(self) -> str:
        """The manifest as the JSON written to ``manifest.json``."""
        data = {
            "format": FORMAT,
            "created": self.created,
            "users": list(self.users),
            "sessions": self.sessions,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
        }
        return json.dumps(data, ensure_ascii=False, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Read a manifest; raises ``ValueError`` (or ``KeyError``/``TypeError``) on a bad one."""
        data: Any = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not a manifest of this version")
        files = tuple(
            FileRecord(str(f["path"]), int(f["size"]), str(f["sha256"])) for f in data["files"]
        )
        return cls(str(data["created"]), files, tuple(data["users"]), int(data["sessions"]))

    @property
    def size(self) -> int:
        """Bytes in the snapshot's files."""
        return sum(f.size for f in self.files)


def copy_hashed(source: BinaryIO, target: Path) -> FileRecord:
    """Copy ``source`` to a new file ``target`` (fsynced); the record of what was written."""
    digest, size = hashlib.sha256(), 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("xb") as out:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
            out.write(chunk)
            size += len(chunk)
        out.flush()
        os.fsync(out.fileno())
    return FileRecord(target.name, size, digest.hexdigest())


def file_hash(path: Path) -> tuple[int, str]:
    """Size and SHA-256 of ``path``."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def read_manifest(snapshot: Path) -> Manifest:
    """The manifest of ``snapshot``, or :class:`SnapshotInvalidError` saying why not."""
    if not snapshot.is_dir():
        raise SnapshotInvalidError(snapshot, "there is no such folder")
    try:
        return Manifest.from_json((snapshot / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SnapshotInvalidError(snapshot, f"it has no {MANIFEST}") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise SnapshotInvalidError(snapshot, f"its {MANIFEST} cannot be read ({exc})") from None


def verify_snapshot(snapshot: Path) -> Manifest:
    """Check every file of ``snapshot`` against its manifest and ``pcai.db`` with SQLite.

    Raises :class:`SnapshotInvalidError` naming the first problem: a file missing, of another
    size or checksum, a file the manifest does not list, or a ``pcai.db`` SQLite finds damaged.
    """
    manifest = read_manifest(snapshot)
    listed = {f.path for f in manifest.files}
    for record in manifest.files:
        path = snapshot / record.path
        if ".." in Path(record.path).parts or Path(record.path).is_absolute():
            raise SnapshotInvalidError(snapshot, f"{record.path!r} points outside it")
        try:
            size, digest = file_hash(path)
        except FileNotFoundError:
            raise SnapshotInvalidError(snapshot, f"{record.path} is missing") from None
        except OSError as exc:
            raise SnapshotInvalidError(snapshot, f"{record.path} cannot be read ({exc})") from None
        if (size, digest) != (record.size, record.sha256):
            raise SnapshotInvalidError(snapshot, f"{record.path} differs from its checksum")
    extra = sorted(
        rel
        for p in snapshot.rglob("*")
        if p.is_file()
        and (rel := p.relative_to(snapshot).as_posix()) != MANIFEST
        and rel not in listed
    )
    if extra:
        raise SnapshotInvalidError(snapshot, f"{extra[0]} is not in its manifest")
    if STATE_DB in listed:
        problem = _sqlite_problem(snapshot / STATE_DB)
        if problem:
            raise SnapshotInvalidError(snapshot, f"{STATE_DB} is damaged ({problem})")
    return manifest


def _sqlite_problem(path: Path) -> str:
    """What SQLite's quick check finds wrong in ``path`` ("" when nothing); never writes."""
    from memory.base.db import connect_plain

    # The copy is in rollback-journal mode (never WAL): a read creates no file beside it.
    conn = connect_plain(path)
    try:
        row = conn.execute("PRAGMA quick_check").fetchone()
    except Exception as exc:  # any driver error here means the copy cannot be used
        return str(exc)
    finally:
        conn.close()
    return "" if row and row[0] == "ok" else str(row[0] if row else "no answer")
