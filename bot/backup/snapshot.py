"""Taking a snapshot while the bot writes: one moment at which every writer has finished.

Every writer of a user's Markdown takes that user's lock file and every writer of a session
its session's (:mod:`memory.base.locks`); a snapshot takes all of them at once, then copies
``pcai.db`` through SQLite's online backup API and the files, then lets go. No file changes
while they are held, and ``pcai.db`` is copied inside that moment, so what one act wrote to
the Markdown and to ``pcai.db`` is in the snapshot together or not at all.

Writers are never made to wait on the snapshot while it waits for them: a lock that is taken
is waited for alone, holding nothing, and the whole set is tried again (no deadlock with a
writer that takes a session's lock and then its user's, whatever the order).

The snapshot is built in a hidden folder (``.pcai-backup-*``) and renamed to its visible name
(``pcai-backup-<UTC time>``) only once its manifest is written and everything is fsynced: a
process killed at any point leaves either a whole snapshot or a hidden folder the next backup
removes. The search index (``knowledge/``), the service's lock and the memory page's signing
key (``web_secret``, a secret: never copied) are left out.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.backup.errors import BackupBusyError, SnapshotInvalidError
from bot.backup.manifest import (
    MANIFEST,
    STATE_DB,
    FileRecord,
    Manifest,
    copy_hashed,
    file_hash,
    read_manifest,
)
from memory.base.locks import USER_LOCK, FileLock, file_lock, user_lock
from memory.base.users import list_user_keys

PREFIX = "pcai-backup-"
HIDDEN = ".pcai-backup-"  # a snapshot being written or removed: never taken for one
BACKUP_LOCK = ".pcai-backup.lock"  # one backup at a time into a folder
SESSIONS = "history"
WAIT_SECONDS = 300.0  # how long to wait for a moment when no writer holds a lock


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot written: its folder and its manifest."""

    path: Path
    manifest: Manifest


def take_snapshot(
    data_dir: Path,
    dest: Path,
    *,
    keep: int = 0,
    now: datetime | None = None,
    wait_seconds: float = WAIT_SECONDS,
) -> tuple[Snapshot, list[Path]]:
    """Write one consistent snapshot of ``data_dir`` into ``dest``; returns it and the old
    snapshots removed (``keep`` > 0 keeps that many, the new one included)."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    dest.mkdir(parents=True, exist_ok=True)
    lock = file_lock(dest / BACKUP_LOCK)
    if not lock.acquire(blocking=False):
        raise BackupBusyError(f"another backup is being written into {dest}")
    try:
        _remove_hidden(dest)  # what a killed backup left: only a backup writes these
        work = dest / f"{HIDDEN}{when:%Y%m%dT%H%M%SZ}.{os.getpid()}"
        work.mkdir(mode=0o700)  # people's memories: readable by the owner of the data only
        manifest = _fill(data_dir, work, when, wait_seconds)
        final = _free_name(dest, f"{PREFIX}{when:%Y%m%dT%H%M%SZ}")
        os.rename(work, final)  # the one step that makes it a snapshot
        _fsync_dir(dest)
        removed = rotate(dest, keep) if keep > 0 else []
        return Snapshot(final, manifest), removed
    finally:
        lock.release()


def snapshots(dest: Path) -> list[Path]:
    """The whole snapshots in ``dest``, oldest first (by the time in the name, then by the
    number of a second taken within the same second: ``-2`` after the bare name, ``-10``
    after ``-9``)."""
    if not dest.is_dir():
        return []
    found = (p for p in dest.iterdir() if p.name.startswith(PREFIX) and p.is_dir())
    return sorted(found, key=_order)


def _order(path: Path) -> tuple[str, int]:
    """(the time in a snapshot's name, its number within that second: 1 for the bare name)."""
    stamp, _, n = path.name[len(PREFIX) :].partition("-")
    return stamp, int(n) if n.isdigit() else 1


def latest_snapshot(dest: Path) -> tuple[Path, datetime] | None:
    """The newest snapshot in ``dest`` and when it was taken (its manifest says), or None."""
    for path in reversed(snapshots(dest)):
        try:
            created = datetime.fromisoformat(read_manifest(path).created)
        except (SnapshotInvalidError, ValueError):
            continue
        return path, created if created.tzinfo else created.replace(tzinfo=UTC)
    return None


def rotate(dest: Path, keep: int) -> list[Path]:
    """Remove all but the newest ``keep`` snapshots; each is hidden first, then deleted, so a
    half-deleted one is never taken for whole."""
    removed = []
    for old in snapshots(dest)[:-keep] if keep > 0 else []:
        hidden = dest / f"{HIDDEN}{old.name[len(PREFIX) :]}.old"
        os.rename(old, hidden)
        shutil.rmtree(hidden, ignore_errors=True)
        removed.append(old)
    return removed


def _fill(data_dir: Path, work: Path, when: datetime, wait_seconds: float) -> Manifest:
    with writers_held(data_dir, wait_seconds) as (users, sessions):
        records: list[FileRecord] = []
        state = data_dir / STATE_DB
        if state.is_file():
            records.append(_backup_state(state, work / STATE_DB))
        for rel in _files(data_dir, users):
            records.append(_copy(data_dir, work, rel))
    manifest = Manifest(
        when.isoformat(timespec="seconds"), tuple(records), tuple(users), len(sessions)
    )
    path = work / MANIFEST
    with path.open("x", encoding="utf-8") as fh:  # last: a manifest means every file is there
        fh.write(manifest.to_json())
        fh.flush()
        os.fsync(fh.fileno())
    for folder in sorted({(work / r.path).parent for r in records} | {work}, reverse=True):
        _fsync_dir(folder)
    return manifest


@contextlib.contextmanager
def writers_held(
    data_dir: Path, wait_seconds: float = WAIT_SECONDS
) -> Iterator[tuple[list[str], list[str]]]:
    """Hold every user's and every session's lock at once; yields (users, sessions).

    A lock another writer holds is waited for alone (nothing else held), then the set is
    tried again with it first. Users or sessions that appear meanwhile are in the next try.
    """
    deadline = time.monotonic() + wait_seconds
    contended: Path | None = None
    while True:
        users, sessions = _listing(data_dir)
        locks = [user_lock(data_dir, u) for u in users] + [
            file_lock(data_dir / SESSIONS / f"{s}.lock") for s in sessions
        ]
        locks.sort(key=lambda lock: lock.path != contended)
        held: list[FileLock] = []
        try:
            for lock in locks:
                if lock.path == contended:
                    _wait_for(lock, deadline)
                elif not lock.acquire(blocking=False):
                    contended = lock.path
                    break
                held.append(lock)
            else:
                if _listing(data_dir) == (users, sessions):
                    yield users, sessions
                    return
        finally:
            for lock in reversed(held):
                lock.release()
        if time.monotonic() > deadline:
            raise BackupBusyError(
                f"the writers of {data_dir} never let go of their files for "
                f"{wait_seconds:.0f} s: try again later"
            )
        time.sleep(random.uniform(0.001, 0.01))


def _wait_for(lock: FileLock, deadline: float) -> None:
    while not lock.acquire(blocking=False):
        if time.monotonic() > deadline:
            raise BackupBusyError(f"{lock.path} stayed locked: try again later")
        time.sleep(0.002)


def _listing(data_dir: Path) -> tuple[list[str], list[str]]:
    folder = data_dir / SESSIONS
    sessions = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    return list_user_keys(data_dir), sessions


def _files(data_dir: Path, users: list[str]) -> list[str]:
    """Every file to copy, relative to ``data_dir``: the users' folders and the sessions."""
    out: list[str] = []
    for top in [f"users/{u}" for u in users] + [SESSIONS]:
        for root, dirs, names in os.walk(data_dir / top):
            dirs.sort()
            for name in sorted(names):
                path = Path(root) / name
                if _kept(name) and path.is_file() and not path.is_symlink():
                    out.append(path.relative_to(data_dir).as_posix())
    return out


def _kept(name: str) -> bool:
    """Not a lock file, nor an atomic write's temporary file a crash left behind."""
    if name == USER_LOCK or name.endswith(".lock"):
        return False
    return not (name.startswith(".") and name.endswith(".tmp"))


def _copy(data_dir: Path, work: Path, rel: str) -> FileRecord:
    source = data_dir / rel
    with source.open("rb") as fh:
        record = copy_hashed(fh, work / rel)
    stat = os.stat(source)
    os.utime(work / rel, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return FileRecord(rel, record.size, record.sha256)


def _backup_state(source: Path, target: Path) -> FileRecord:
    """Copy ``pcai.db`` through SQLite's online backup API (a consistent copy while it is
    written) into a standalone file (rollback journal, not WAL)."""
    from memory.base.db import connect_plain

    src, dst = connect_plain(source), connect_plain(target)
    try:
        src.execute("PRAGMA busy_timeout=30000")
        src.backup(dst)  # all pages in one step: one read transaction, one moment
        dst.execute("PRAGMA journal_mode=DELETE")
        dst.commit()
    finally:
        dst.close()
        src.close()
    with target.open("rb") as fh:
        os.fsync(fh.fileno())
    size, digest = file_hash(target)
    return FileRecord(STATE_DB, size, digest)


def _remove_hidden(dest: Path) -> None:
    for path in dest.iterdir():
        if path.name.startswith(HIDDEN) and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)


def _free_name(dest: Path, name: str) -> Path:
    """A name that sorts after every snapshot of ``dest``: a number after the highest one of
    that second, never a name rotation freed (it would sort first and be rotated away)."""
    stamp = name[len(PREFIX) :]
    same = [n for s, n in map(_order, snapshots(dest)) if s == stamp]
    n = max(same, default=0) + 1
    path = dest / (name if n == 1 else f"{name}-{n}")
    while path.exists():
        n += 1
        path = dest / f"{name}-{n}"
    return path


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
