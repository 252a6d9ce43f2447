"""History services built on the real index (real SQLite, the real e5 embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import pytest

from bot.app import Services
from history.dailylog import DailyLog
from history.sessions import SessionStore

TAIPEI = ZoneInfo("Asia/Taipei")


@dataclass
class HistoryKit:
    services: Services
    sessions: SessionStore
    daily_log: DailyLog

    def indexed_units(self, user_key: str, rel: str) -> dict[str, str]:
        return self.services.store.indexed_units(user_key, rel)


@pytest.fixture
def kit(services: Services) -> Iterator[HistoryKit]:
    yield HistoryKit(
        services,
        SessionStore(services.settings.sessions_dir),
        DailyLog(services.settings.data_dir, TAIPEI),
    )
