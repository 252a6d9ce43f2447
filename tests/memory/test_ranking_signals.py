"""The retrieval score in the ranking (relevance, recency, access, weight)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from bot.app import Services
from bot.cli import main
from memory.index.sources import KIND_MEMORY
from memory.search import scoring
from memory.search.hybrid import SearchHit

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=timezone(timedelta(hours=8)))
USER = "cli_alice"
# Two wordings of one fact: equally relevant to the query, within a few hundredths.
FIRST, SECOND = "我每天早上都喝一杯黑咖啡", "每天早上我會喝一杯黑咖啡"
QUERY = "我早上喝什麼咖啡"


def test_retrieval_score_is_the_documented_formula() -> None:
    # 0.4 * 0.8 + 0.25 * 0.5 + 0.01 * 0.25 + 0.15 * 0.7
    assert scoring.retrieval_score(0.8, 0.5, 0.25, 0.7) == pytest.approx(0.5525)
    assert scoring.signal_recency(0.0, 0.05) == 1.0
    assert scoring.signal_recency(14.0, 0.05) == pytest.approx(math.exp(-0.7))
    assert scoring.signal_recency(300.0, 0.0) == 1.0  # rate 0: the term is held at 1
    assert scoring.signal_recency(None, 0.05) == 1.0
    assert scoring.access_frequency(4) == 0.2 and scoring.access_frequency(40) == 1.0
    assert scoring.weight_factor(7) == 0.7 and scoring.weight_factor(12) == 1.0
    assert scoring.priority_factor(0.5, "low_priority", 0.8) == pytest.approx(0.4)
    assert scoring.priority_factor(0.5, "active", 0.8) == 0.5


def test_without_signals_the_order_is_relevance_order() -> None:
    # LoCoMo's case: no access counts, one weight, rate 0: a rising function of relevance.
    scores = [scoring.retrieval_score(r, 1.0, 0.0, 0.5) for r in (0.9, 0.7, 0.71, 0.3)]
    assert sorted(range(4), key=lambda i: -scores[i]) == [0, 2, 1, 3]


def _two(services: Services) -> tuple[str, str]:
    a = services.memory.remember(USER, FIRST, now=NOW - timedelta(days=1)).id
    b = services.memory.remember(USER, SECOND, now=NOW - timedelta(days=1)).id
    return a, b


def _ranked(services: Services) -> list[SearchHit]:
    hits = services.memory.search(USER, QUERY, 5, now=NOW)
    return [h for h in hits if h.chunk.kind == KIND_MEMORY]


def test_a_low_priority_memory_ranks_below_an_equally_relevant_active_one(
    services: Services,
) -> None:
    _two(services)
    before = _ranked(services)
    assert len(before) == 2
    top, other = before[0].chunk.unit_id, before[1].chunk.unit_id
    assert before[0].stages["retrieval"] - before[1].stages["retrieval"] < 0.05
    services.governance.set_status(USER, top, "low_priority", now=NOW, reason="health 0.2")
    after = _ranked(services)
    assert [h.chunk.unit_id for h in after] == [other, top]  # still found, ranked lower
    faded = after[1]
    assert faded.stages["priority"] == pytest.approx(0.8 * faded.stages["retrieval"])
    assert faded.score == faded.stages["mmr"] == faded.stages["priority"]


def test_access_counts_break_ties_and_weight_lifts_a_memory(services: Services) -> None:
    _two(services)
    before = _ranked(services)
    low = before[1]
    for _ in range(10):
        services.access.bump(USER, [low.chunk.unit_id], NOW)
    after = _ranked(services)
    lifted = next(h for h in after if h.chunk.unit_id == low.chunk.unit_id)
    # 10 uses: +0.01 * 10/20, a tie-breaker below the relevance spread (issue 24).
    expected = 0.4 * lifted.stages["decay"] + 0.25 + 0.01 * 0.5 + 0.15 * 0.5
    assert lifted.stages["retrieval"] == pytest.approx(expected)

    # A weight the user gave (in MEMORY.md) counts the same way.
    doc = services.memory.document(USER)
    other = before[0].chunk.unit_id
    heavier = replace(doc.by_id()[other], user_weight=9)
    services.memory.write_document(USER, doc.with_entry(heavier))
    hit = next(h for h in _ranked(services) if h.chunk.unit_id == other)
    assert hit.stages["retrieval"] == pytest.approx(0.4 * hit.stages["decay"] + 0.25 + 0.135)


def test_another_users_counts_never_move_my_ranking(services: Services) -> None:
    a, _ = _two(services)
    for _ in range(20):  # the same id, counted in someone else's name
        services.access.bump("cli_bob", [a], NOW)
    for hit in _ranked(services):
        assert hit.stages["retrieval"] == pytest.approx(0.4 * hit.stages["decay"] + 0.325)


def test_explain_shows_the_retrieval_and_priority_stages(
    services: Services, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _two(services)
    monkeypatch.setenv("PCAI_DATA_DIR", str(services.settings.data_dir))
    assert main(["search", "--user", USER, "--explain", QUERY]) == 0
    out = capsys.readouterr().out
    assert "-> retrieval " in out and "-> priority " in out
