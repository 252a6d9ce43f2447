"""Reply lift: the record after a matching question, its answer, scores at least the question."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from memory import Memory
from memory.search.replies import asks, reply_lift
from tests.memory.daylogs import fused_by_ref, write_day_log

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
QUERY = "What genre is the screenplay she finished?"
# The answer (s4) shares no word with the query; the bot's question before it (s3) does.
DAY = [
    ("user", "Some good news today, my week was hectic but fine", "s1"),
    ("user", "I finally finished my first full screenplay last Friday", "s2"),
    ("bot", "Congratulations! What genre is the screenplay?", "s3"),
    ("user", "A mix of drama and romance, with a road trip in it", "s4"),
    ("bot", "Sounds like a story people will want to see.", "s5"),
    ("user", "My brother is moving to Porto in the spring", "s6"),
]


def _fused(library: Memory) -> dict[str, float]:
    return fused_by_ref(library, "tg_r", QUERY, NOW)


@pytest.fixture
def logged(library: Memory) -> Memory:
    write_day_log(library, "tg_r", "2026-02-20", DAY)
    return library


def test_the_reply_to_a_matching_question_scores_at_least_the_question(logged: Memory) -> None:
    cfg = logged.service.searcher.config
    assert (cfg.reply_hits, cfg.reply_share) == (20, 1.02)
    fused = _fused(logged)
    assert fused["s4"] >= fused["s3"] - 1e-9
    # The neighbour lift alone leaves the answer a share below the question that asked.
    searcher = logged.service.searcher
    searcher.config = replace(cfg, reply_hits=0)
    before = _fused(logged)
    assert before["s4"] < before["s3"] - 1e-6
    assert fused["s4"] > before["s4"]


def test_only_a_question_lifts_its_reply() -> None:
    assert asks("Bart: What's the new one about?")
    assert asks("小明：你最近在忙什麼？")
    assert asks("Nate: Did you see it?\n\n[shares image: a photo of a cat]")
    assert not asks("Joanna: It's a mix of drama and romance!")
    assert not asks("Nate: Why? Because it rained all day.")
    order = {"a.md": [1, 2, 3], "b.md": [7]}
    lift = reply_lift([(2, "a.md", 0.6), (3, "a.md", 0.5), (7, "b.md", 0.9)], order, 1.0)
    # The record after each asking match; the last record of a file has no reply to lift.
    assert lift == {3: 0.6}
