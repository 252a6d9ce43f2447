"""The nightly backup of ``pcai run`` when ``PCAI_BACKUP_DIR`` names a folder, with rotation."""

from __future__ import annotations

import asyncio
from datetime import datetime, time
from pathlib import Path
from typing import TYPE_CHECKING

from bot.backup.snapshot import take_snapshot
from bot.jobs import JobSpec

if TYPE_CHECKING:
    from bot.settings import Settings

BACKUP_AT = time(3, 0)  # nightly in the users' zone, before the lifecycle (03:30) changes much


def backup_jobs(settings: Settings) -> list[JobSpec]:
    """The backup job when a backup folder is set, else none.

    Its body takes the settings it was built with, not the services: it needs only the two
    folders and how many snapshots to keep.
    """
    if not settings.backup.dir:
        return []
    data_dir, folder = settings.data_dir, Path(settings.backup.dir).expanduser()
    keep = settings.backup.keep

    async def backup_job(_services: object, now: datetime) -> str:
        """One snapshot into the backup folder, the oldest beyond ``keep`` removed."""
        snapshot, removed = await asyncio.to_thread(
            take_snapshot, data_dir, folder, keep=keep, now=now
        )
        m = snapshot.manifest
        return (
            f"{snapshot.path.name}: {len(m.files)} files of {len(m.users)} users; "
            f"{len(removed)} older removed"
        )

    return [JobSpec("backup", backup_job, daily_at=BACKUP_AT)]
