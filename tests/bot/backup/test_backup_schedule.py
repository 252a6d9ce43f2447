"""Nightly backups in the bot (``PCAI_BACKUP_DIR``, ``PCAI_BACKUP_KEEP``) and doctor's line."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest
from telegram.ext import ApplicationBuilder

from bot.app import Services
from bot.backup import latest_snapshot, snapshots, take_snapshot, verify_snapshot
from bot.backup.schedule import backup_jobs
from bot.doctor import run_checks
from bot.doctor.backup import check_backup
from bot.errors import DoctorWarning
from bot.jobs import JobRunner
from bot.scheduling import ptb_job_setup
from bot.settings import BackupConfig, Settings, load_settings
from tests.bot.backup.helpers import fill


def _with_backups(services: Services, folder: Path, keep: int) -> Services:
    services.settings = replace(services.settings, backup=BackupConfig(str(folder), keep))
    return services


def test_no_backup_job_without_a_folder_and_one_nightly_with_it(
    services: Services, tmp_path: Path
) -> None:
    assert backup_jobs(Settings()) == []
    [spec] = backup_jobs(load_settings({"PCAI_BACKUP_DIR": str(tmp_path)}))
    assert (spec.name, spec.daily_at, spec.every) == ("backup", time(3, 0), None)
    application = ApplicationBuilder().token("123:TEST").build()
    ptb_job_setup(_with_backups(services, tmp_path, 3))(application)  # what `pcai run` does
    assert "backup" in {job.name for job in application.job_queue.jobs()}


async def test_the_nightly_job_keeps_the_newest_snapshots(
    services: Services, tmp_path: Path
) -> None:
    await fill(services)
    folder = tmp_path / "nightly"
    _with_backups(services, folder, keep=2)
    [spec] = backup_jobs(services.settings)
    nights = [datetime(2026, 3, d, 3, 0, tzinfo=UTC) for d in (1, 2, 3)]
    runner = JobRunner(services)
    for night in nights:
        runner.now = lambda night=night: night  # type: ignore[misc]
        status = await runner.run(spec)
        assert status is not None and status.ok, status
    kept = snapshots(folder)
    assert [p.name for p in kept] == [
        "pcai-backup-20260302T030000Z",
        "pcai-backup-20260303T030000Z",
    ]
    for snapshot in kept:
        verify_snapshot(snapshot)
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == [p.name for p in kept]
    assert "1 older removed" in runner.status["backup"].detail


async def test_snapshots_taken_in_one_second_keep_the_newest_with_rotation(
    services: Services, tmp_path: Path
) -> None:
    """Found by the world machine: with keep, a snapshot taken in the same second as the
    ones rotation had just thinned took the freed bare name, sorted first, and was removed by
    its own rotation (the backup reported a snapshot that was gone); from the tenth on, "-10"
    sorted before "-9"."""
    await fill(services)
    folder, second = tmp_path / "busy", datetime(2026, 3, 1, 3, 0, tzinfo=UTC)
    taken = []
    for _ in range(12):
        snap, _ = take_snapshot(services.settings.data_dir, folder, keep=3, now=second)
        assert snap.path.is_dir(), f"{snap.path.name} was rotated away as it was written"
        assert latest_snapshot(folder) == (snap.path, second)
        taken.append(snap.path)
    assert snapshots(folder) == taken[-3:]


def test_doctor_says_when_the_last_backup_is_older_than_two_days(
    settings: Settings, tmp_path: Path
) -> None:
    assert "backup" not in {r.check for r in run_checks(settings)}  # backups off: no line
    folder = tmp_path / "b"
    on = replace(settings, backup=BackupConfig(str(folder), 7))
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    with pytest.raises(DoctorWarning, match="no backup in"):
        check_backup(on, now)
    take_snapshot(settings.data_dir, folder, now=now - timedelta(days=3))
    with pytest.raises(DoctorWarning, match=r"is 3\.0 days old"):
        check_backup(on, now)
    take_snapshot(settings.data_dir, folder, now=now - timedelta(hours=5))
    assert check_backup(on, now).endswith("is 5.0 hours old")
    take_snapshot(settings.data_dir, folder)  # doctor's own clock: taken just now
    [line] = [r for r in run_checks(on) if r.check == "backup"]
    assert line.status == "ok"
