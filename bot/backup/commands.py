"""``pcai backup`` and ``pcai restore``: the operator's side of the backup package."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bot.backup.errors import NoBackupDirError
from bot.backup.manifest import Manifest, verify_snapshot
from bot.backup.restore import restore_snapshot
from bot.backup.snapshot import take_snapshot
from bot.settings import Settings


def cmd_backup(settings: Settings, args: argparse.Namespace) -> int:
    """Write a snapshot of the data folder into DIR, or check one (``--verify``)."""
    if args.verify:
        checked = Path(args.verify).expanduser()
        _say(args, "verified", checked, verify_snapshot(checked))
        return 0
    folder = args.dir or settings.backup.dir
    if not folder:
        raise NoBackupDirError()
    if not settings.data_dir.is_dir():
        raise FileNotFoundError(f"there is no data folder at {settings.data_dir} to back up")
    taken, _ = take_snapshot(settings.data_dir, Path(folder).expanduser())
    _say(args, "backed up", taken.path, taken.manifest)
    return 0


def cmd_restore(settings: Settings, args: argparse.Namespace) -> int:
    """Fill the empty data folder from SNAPSHOT, then rebuild the index (progress bar)."""
    from bot.app import build_services
    from bot.serve import progress_bar

    snapshot = Path(args.snapshot).expanduser()
    manifest = restore_snapshot(snapshot, settings.data_dir)
    services = build_services(settings)  # a start: pcai.db migrated, crash windows healed
    try:
        with progress_bar("reindex") as bar:  # the bar of `pcai reindex`
            stats = services.library.reindex(None, progress=bar)
    finally:
        services.close()
    _say(args, "restored", settings.data_dir, manifest, indexed=stats.added)
    return 0


def _say(args: argparse.Namespace, done: str, path: Path, m: Manifest, **more: Any) -> None:
    if args.json:
        row = {"path": str(path), "files": len(m.files), "users": len(m.users)}
        row |= {"bytes": m.size, "created": m.created, **more}
        print(json.dumps({done.replace(" ", "_"): True, **row}, ensure_ascii=False))
        return
    extra = f", {more['indexed']} units indexed" if "indexed" in more else ""
    print(
        f"{done} {path}: {len(m.files)} files, {len(m.users)} users, "
        f"{m.size / 1e6:.1f} MB, taken {m.created}{extra}"
    )
