"""Neighbour lift: the records next to a strong match in the same day's log come with it."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from memory import Memory
from tests.memory.daylogs import fused_by_ref, write_day_log

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
QUERY = "cello lessons with Margot"
DAY = [
    ("user", "I finally started cello lessons with a teacher named Margot", "r1"),
    ("bot", "That sounds wonderful, how often do you meet?", "r2"),
    ("user", "Every Thursday evening after work, at the community hall", "r3"),
    ("bot", "Thursday evenings are a good rhythm for practice.", "r4"),
    ("user", "My sister is visiting from Lisbon next month", "r5"),
]
OTHER_DAY = [("user", "Booked a table at the ramen place for Saturday", "o1")]


def _fused(library: Memory) -> dict[str, float]:
    return fused_by_ref(library, "tg_n", QUERY, NOW)


@pytest.fixture
def logged(library: Memory) -> Memory:
    write_day_log(library, "tg_n", "2026-02-20", DAY)
    write_day_log(library, "tg_n", "2026-02-21", OTHER_DAY)
    return library


def test_records_near_a_match_score_a_share_of_it(logged: Memory) -> None:
    cfg = logged.service.searcher.config
    assert (cfg.neighbour_hits, cfg.neighbour_span, cfg.neighbour_share) == (5, 2, 0.9)
    # The neighbour lift alone: r2 asks, so the reply lift (test_replies.py) would raise r3.
    logged.service.searcher.config = replace(cfg, reply_hits=0)
    fused = _fused(logged)
    top = fused["r1"]
    assert top == max(fused.values())
    assert fused["r2"] >= 0.9 * top - 1e-9
    # Two records away: the share squared (the reply that answers "how often"); 0.95 lifted
    # it to 0.9025 of the match, level with lines that match the query themselves (LoCoMo).
    assert fused["r3"] == pytest.approx(0.9**2 * top)
    # Beyond the span, and on another day, nothing is lifted.
    assert fused.get("r5", 0.0) < 0.9 * top
    assert "o1" not in fused


def test_without_the_lift_the_answer_two_records_away_is_lost(logged: Memory) -> None:
    searcher = logged.service.searcher
    searcher.config = replace(searcher.config, neighbour_hits=0, reply_hits=0)
    fused = _fused(logged)
    assert "r1" in fused
    assert "r3" not in fused
