"""Backups taken at any point of the person's life with the bot (issue 31), while the process
runs: ``pcai backup``'s own function (:func:`bot.backup.take_snapshot`) on the live folder,
between any two acts (a snapshot waits for the writers' locks, so one started while a turn
is answering lands at that turn's end).

What each person's data was at that moment is read from the files as the snapshot is taken;
the invariant restores every new snapshot into a fresh folder (``pcai restore``'s function)
and finds there exactly that: every Markdown file byte for byte, the reminders and the zone,
the log's lines, and what the model says the person kept.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

from hypothesis.stateful import rule

from bot.backup import restore_snapshot, take_snapshot, verify_snapshot
from tests.world import files
from tests.world.memory_rules import on
from tests.world.page_rules import PageRules
from tests.world.person import Kept, kept_in_files


@dataclass(frozen=True, slots=True)
class Taken:
    """A snapshot and what it must give back: each person's data, and what they kept."""

    path: Path
    moments: dict[str, files.Moment]
    kept: dict[str, Kept]


class BackupRules(PageRules):
    """``pcai backup`` at any point; the snapshots restored."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[Taken] = []  # snapshots not yet restored and compared
        self.backups = self.dir / "backups"

    def now_moments(self) -> tuple[dict[str, files.Moment], dict[str, Kept]]:
        """Each person's data and what they keep, as the files hold them now."""
        keys = list(self.people)
        return (
            {k: files.moment(self.data, k) for k in keys},
            {k: kept_in_files(self.data, k) for k in keys},
        )

    async def snapshot(self) -> Path:
        # In a thread, as the operator's `pcai backup` is another process: the service's
        # writers keep running on the loop while the snapshot waits for their locks.
        taken, _ = await asyncio.to_thread(take_snapshot, self.data, self.backups, keep=3)
        return taken.path

    @on("backup")
    @rule()
    def backup(self) -> None:
        """``pcai backup`` between two acts: the snapshot is the folder at that moment."""
        moments, kept = self.now_moments()
        path = self.call("pcai backup", self.snapshot())
        self.taken.append(Taken(path, moments, kept))
        for k, p in self.people.items():  # the model agrees with the files at that moment
            assert kept[k] == p.kept(), f"{k} keeps {p.kept()}; the files hold {kept[k]}"

    def snapshot_problems(self) -> list[str]:
        """Each snapshot not yet checked, restored into a fresh folder, against its moment."""
        out: list[str] = []
        for taken in self.taken:
            if not taken.path.exists():
                out.append(f"the snapshot {taken.path.name} is gone")
                continue
            verify_snapshot(taken.path)
            restored = self.dir / f"restored-{taken.path.name}"
            try:
                restore_snapshot(taken.path, restored)
                for key, was in taken.moments.items():
                    got = files.moment(restored, key)
                    for rel in sorted(set(was.markdown) | set(got.markdown)):
                        if was.markdown.get(rel) != got.markdown.get(rel):
                            out.append(f"{taken.path.name}: {rel} is not byte for byte as taken")
                    if got.reminders != was.reminders or got.zone != was.zone:
                        out.append(f"{taken.path.name}: {key}'s reminders or zone differ")
                    if got.log != was.log:
                        out.append(f"{taken.path.name}: {key}'s log lines differ")
                    if kept_in_files(restored, key) != taken.kept[key]:
                        out.append(f"{taken.path.name}: {key} keeps other things than then")
            finally:
                shutil.rmtree(restored, ignore_errors=True)
        self.taken = []
        return out
