"""Restoring a snapshot: an empty data folder filled with its files, all at once.

The files are copied into a hidden folder beside the target, each checked against the
manifest as it is read, and the folder is renamed onto the (empty) target only when all are
there: a restore that stops half-way leaves the target as it was. Rebuilding the search
index from the restored Markdown is the caller's (``pcai restore`` shows its progress).
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from bot.backup.errors import RestoreTargetError, SnapshotInvalidError
from bot.backup.manifest import Manifest, copy_hashed, verify_snapshot


def restore_snapshot(snapshot: Path, data_dir: Path) -> Manifest:
    """Fill the empty (or absent) ``data_dir`` with ``snapshot``'s files; its manifest.

    Raises :class:`SnapshotInvalidError` for a snapshot that does not verify and
    :class:`RestoreTargetError` for a target that holds anything (left untouched).
    """
    manifest = verify_snapshot(snapshot)
    if _has_anything(data_dir):
        raise RestoreTargetError(data_dir)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    work = data_dir.parent / f".{data_dir.name}.restoring-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        for record in manifest.files:
            with (snapshot / record.path).open("rb") as fh:
                copied = copy_hashed(fh, work / record.path)
            if (copied.size, copied.sha256) != (record.size, record.sha256):
                raise SnapshotInvalidError(snapshot, f"{record.path} changed while read")
        try:
            os.rename(work, data_dir)  # onto an empty folder: one step
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise RestoreTargetError(data_dir) from None
            raise
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return manifest


def _has_anything(data_dir: Path) -> bool:
    if not data_dir.exists():
        return False
    if not data_dir.is_dir():
        return True
    return any(data_dir.iterdir())
