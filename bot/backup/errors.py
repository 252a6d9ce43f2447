"""Every exception the backup package raises on purpose, under one base class.

Each message is the one sentence ``pcai`` prints; ``exit_code`` is the CLI's (1: the data or
the snapshot is the problem, 2: the command line is).
"""

from __future__ import annotations

from pathlib import Path


class BackupError(Exception):
    """Base class of every error of a backup, a check or a restore."""

    exit_code = 1


class NoBackupDirError(BackupError):
    """``pcai backup`` was given no folder and ``PCAI_BACKUP_DIR`` is not set."""

    exit_code = 2

    def __init__(self) -> None:
        super().__init__("backup needs a folder: pass DIR or set PCAI_BACKUP_DIR")


class BackupBusyError(BackupError):
    """No moment came when the writers' locks were all free, or another backup writes."""


class SnapshotInvalidError(BackupError):
    """A snapshot does not match its manifest (or has none): it is not taken for whole."""

    def __init__(self, snapshot: Path, problem: str) -> None:
        super().__init__(f"{snapshot} is not a whole snapshot: {problem}")
        self.snapshot = snapshot
        self.problem = problem


class RestoreTargetError(BackupError):
    """The data folder a restore would fill is not empty (nothing in it was touched)."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(
            f"{data_dir} is not empty: restore fills only an empty data folder "
            "(name a new one with --data DIR)"
        )
        self.data_dir = data_dir
