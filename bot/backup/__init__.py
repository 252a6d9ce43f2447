"""Backups while the bot runs: one consistent snapshot of a data folder, checked and restored.

``take_snapshot`` writes it (pcai.db through SQLite's online backup API, the Markdown and the
sessions under the locks their writers take), ``verify_snapshot`` checks it against its
manifest, ``restore_snapshot`` fills an empty data folder from it. The search index is never
in a snapshot: it is derived from the Markdown and rebuilt after a restore.
"""

from __future__ import annotations

from bot.backup.errors import (
    BackupBusyError,
    BackupError,
    NoBackupDirError,
    RestoreTargetError,
    SnapshotInvalidError,
)
from bot.backup.manifest import Manifest, verify_snapshot
from bot.backup.restore import restore_snapshot
from bot.backup.snapshot import Snapshot, latest_snapshot, snapshots, take_snapshot

__all__ = [
    "BackupBusyError",
    "BackupError",
    "Manifest",
    "NoBackupDirError",
    "RestoreTargetError",
    "Snapshot",
    "SnapshotInvalidError",
    "latest_snapshot",
    "restore_snapshot",
    "snapshots",
    "take_snapshot",
    "verify_snapshot",
]
