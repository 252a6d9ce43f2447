"""Short-term keyword table."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memory.short_term import KEEP_PER_CATEGORY, ShortTermStore, categories_in
from memory.state import StateDB

T0 = datetime(2026, 3, 1, 7, 0)


@pytest.fixture
def store(tmp_path: Path) -> ShortTermStore:
    return ShortTermStore(StateDB(tmp_path / "pcai.db"))


@pytest.mark.parametrize(
    ("text", "cats"),
    [
        ("今天天氣如何？", ["weather"]),
        ("明天的行事曆有什麼", ["calendar"]),
        ("有新信件嗎", ["mail"]),
        ("What's the weather like?", ["weather"]),
        ("check my schedule and email", ["calendar", "mail"]),
        ("my snail is slow", []),
        ("我喜歡藍色", []),
    ],
)
def test_keywords(text: str, cats: list[str]) -> None:
    assert categories_in(text) == cats


def test_latest_three_of_the_named_category_for_that_user_only(store: ShortTermStore) -> None:
    for i in range(5):
        store.add("tg_1", "weather", f"晴天 {i}", T0 + timedelta(hours=i))
    store.add("tg_1", "mail", "老闆來信", T0)
    store.add("tg_2", "weather", "someone else's rain", T0 + timedelta(days=1))
    rows = store.for_message("tg_1", "今天天氣？")
    assert [r.content for r in rows] == ["晴天 4", "晴天 3", "晴天 2"]
    assert all(r.user_key == "tg_1" for r in rows)
    assert store.for_message("tg_1", "any mail today?")[0].content == "老闆來信"
    assert store.for_message("tg_1", "hello there") == []


def test_rows_survive_a_restart(tmp_path: Path) -> None:
    ShortTermStore(StateDB(tmp_path / "pcai.db")).add("tg_1", "calendar", "9:00 dentist", T0)
    again = ShortTermStore(StateDB(tmp_path / "pcai.db"))
    assert again.for_message("tg_1", "my calendar")[0].content == "9:00 dentist"


def test_empty_note_is_refused(store: ShortTermStore) -> None:
    with pytest.raises(ValueError):
        store.add("tg_1", "weather", "   ", T0)


def test_only_the_newest_rows_of_a_category_are_kept(store: ShortTermStore) -> None:
    for i in range(KEEP_PER_CATEGORY + 5):
        store.add("telegram_1", "weather", f"天氣筆記 {i}", T0 + timedelta(minutes=i))
    store.add("telegram_1", "mail", "信件筆記", T0)
    store.add("telegram_2", "weather", "別人的天氣", T0)
    rows = store.latest("telegram_1", "weather", limit=1000)
    assert len(rows) == KEEP_PER_CATEGORY and rows[-1].content == "天氣筆記 5"
    assert len(store.latest("telegram_1", "mail")) == 1
    assert len(store.latest("telegram_2", "weather")) == 1
