"""Per-user folders. A user key names one folder and can never reach another."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from memory.errors import InvalidUserKeyError

# telegram_<id>, cli_<name>, and other "<kind>_<name>" keys (benchmarks use their own kind).
_USER_KEY = re.compile(r"^[a-z]+_[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_user_key(user_key: str) -> str:
    """Return ``user_key`` if it is safe to use as a folder name, else raise."""
    if not _USER_KEY.fullmatch(user_key) or ".." in user_key:
        raise InvalidUserKeyError(user_key)
    return user_key


@dataclass(frozen=True, slots=True)
class UserPaths:
    """Where one user's Markdown files live under the data folder."""

    root: Path
    user_key: str

    @classmethod
    def of(cls, data_dir: Path, user_key: str) -> UserPaths:
        """Build the paths of ``user_key`` under ``data_dir/users``."""
        return cls(data_dir / "users" / check_user_key(user_key), user_key)

    @property
    def memory_md(self) -> Path:
        """Confirmed long-term memories."""
        return self.root / "MEMORY.md"

    @property
    def memory_full_md(self) -> Path:
        """Compaction summaries."""
        return self.root / "MEMORY_FULL.md"

    @property
    def memory_topic_md(self) -> Path:
        """The current dominant topic."""
        return self.root / "MEMORY_TOPIC.md"

    @property
    def index_state(self) -> Path:
        """The section-proportion window."""
        return self.root / "index_state.json"

    @property
    def auto_summaries_md(self) -> Path:
        """Idle-session summaries."""
        return self.root / "auto_summaries.md"

    @property
    def log_dir(self) -> Path:
        """Daily logs, one file a day."""
        return self.root / "memory"

    def daily_log(self, day: str) -> Path:
        """The daily log of ``day`` (YYYY-MM-DD)."""
        return self.log_dir / f"{day}.md"


def list_user_keys(data_dir: Path) -> list[str]:
    """Every user key that has a folder under ``data_dir/users``."""
    users = data_dir / "users"
    if not users.is_dir():
        return []
    return sorted(p.name for p in users.iterdir() if p.is_dir() and _USER_KEY.fullmatch(p.name))
