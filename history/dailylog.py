"""Daily logs: every user message goes to ``users/<key>/memory/YYYY-MM-DD.md``.

The day and the time are the user's (the time zone the settings name; ``None`` means the
machine's local zone). Records use :mod:`memory.base.logs`' format, which the indexer parses (a
message reads back as written and never as a second record); the indexing job
(:meth:`memory.index.indexer.Indexer.sync_daily_logs`) re-indexes only files that changed since
the last run, and within a file only records it has not seen, so running it twice (or after a
restart) indexes every line once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path

from memory.base.fsutil import atomic_write_text, read_text
from memory.base.guards import mask
from memory.base.locks import user_lock
from memory.base.logs import format_record, log_header, parse_log
from memory.base.users import UserPaths, day_files
from memory.errors import UnreadableFileError


def _holds(day: str, current: str, record: str) -> bool:
    """Whether the log ``current`` already holds ``record``'s message (by ref, speaker, time).

    Only a record with a ref has an identity. The text is searched for the ref's tag first;
    the log is parsed only when the tag is there (a message quoting a tag is not a record).
    """
    parsed = parse_log(day, record)
    if len(parsed) != 1 or not parsed[0].ref or f"{{#{parsed[0].ref}}}\n" not in current:
        return False
    new = parsed[0]
    return any(
        (r.ref, r.who, r.time) == (new.ref, new.who, new.time) for r in parse_log(day, current)
    )


class DailyLog:
    """Appends records to users' daily logs."""

    def __init__(self, data_dir: Path, tz: tzinfo | None = None) -> None:
        self.data_dir = data_dir
        self.tz = tz

    def local(self, when: datetime) -> datetime:
        """``when`` in the user's time zone."""
        return when.astimezone(self.tz)

    def rel_path(self, when: datetime) -> str:
        """The log file (relative to the user's folder) that holds ``when``."""
        return f"memory/{self.local(when):%Y-%m-%d}.md"

    def append(self, user_key: str, who: str, text: str, when: datetime, ref: str = "") -> str:
        """Append one record and return the file's path relative to the user's folder.

        The file is rewritten atomically (a crash leaves the old or the new file), under a
        lock so two appends never race. Idempotent by record id: a record with a ``ref`` is
        not written again when the day's log already holds it (same ref, speaker and time),
        which is what a message replayed after a crash (bot/telegram/queues.py) or a retried
        job is.
        """
        local = self.local(when)
        day = f"{local:%Y-%m-%d}"
        path = UserPaths.of(self.data_dir, user_key).daily_log(day)
        # Secrets (passwords, card numbers, keys) never reach the long-term, indexed log.
        record = format_record(local, who, mask(text), ref)
        with user_lock(self.data_dir, user_key):
            current = read_text(path)
            if not current:
                current = log_header(day)
            elif not current.endswith("\n"):
                current += "\n"
            if not _holds(day, current, record):
                atomic_write_text(path, current + record)
        return f"memory/{day}.md"

    def rewrite(
        self, user_key: str, edit: Callable[[str, str], str]
    ) -> tuple[list[str], list[str]]:
        """Apply ``edit(day, text)`` to each of the user's logs (forget's redaction).

        Returns the files it changed and those it could not read (not UTF-8; left as they
        are). Holds the user's file lock, so a message logged meanwhile is neither lost nor
        written back over the edit.
        """
        changed, unreadable = [], []
        for day_file in day_files(UserPaths.of(self.data_dir, user_key)):
            rel = f"memory/{day_file.name}"
            with user_lock(self.data_dir, user_key):
                try:
                    text = read_text(day_file)
                except UnreadableFileError:
                    unreadable.append(rel)
                    continue
                new = edit(day_file.stem, text)
                if new != text:
                    atomic_write_text(day_file, new)
                    changed.append(rel)
        return changed, unreadable

    def append_user_message(
        self, user_key: str, text: str, when: datetime, message_id: str = ""
    ) -> str:
        """Log one user message (every message the user sends is logged)."""
        return self.append(user_key, "user", text, when, message_id)
