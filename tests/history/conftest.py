"""History services built on the real index (real SQLite, the real e5 embedder), no bot/."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import memory
from history.config import HistoryConfig
from history.dailylog import DailyLog
from history.sessions import SessionStore
from memory import E5Embedder, Memory

TAIPEI = ZoneInfo("Asia/Taipei")


@dataclass
class HistoryKit:
    library: Memory
    sessions: SessionStore
    daily_log: DailyLog
    history: HistoryConfig = field(default_factory=HistoryConfig)

    def indexed_units(self, user_key: str, rel: str) -> dict[str, str]:
        return self.library.store.indexed_units(user_key, rel)


@pytest.fixture
def kit(tmp_path: Path, embedder: E5Embedder) -> Iterator[HistoryKit]:
    data_dir = tmp_path / "botmemory"
    with memory.open(data_dir, embedder=embedder) as library:
        yield HistoryKit(library, SessionStore(data_dir / "history"), DailyLog(data_dir, TAIPEI))
