"""``pcai doctor``'s backup line: whether the newest snapshot is recent (when backups are on)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.backup.snapshot import latest_snapshot
from bot.errors import DoctorWarning
from bot.settings import Settings

STALE_AFTER = timedelta(days=2)  # the nightly job missed two nights


def check_backup(settings: Settings, now: datetime | None = None) -> str:
    """One line on the newest snapshot in ``PCAI_BACKUP_DIR``; a warning when there is none
    or it is older than two days."""
    folder = Path(settings.backup.dir).expanduser()
    newest = latest_snapshot(folder)
    if newest is None:
        raise DoctorWarning(
            f"no backup in {folder} yet: `pcai run` writes one nightly, `pcai backup` now"
        )
    path, created = newest
    age = (now or datetime.now(UTC)) - created
    hours = age.total_seconds() / 3600
    if age > STALE_AFTER:
        raise DoctorWarning(
            f"the last backup, {path.name}, is {hours / 24:.1f} days old: is `pcai run` "
            "running? `pcai backup` takes one now"
        )
    return f"the last backup, {path.name}, is {hours:.1f} hours old"
