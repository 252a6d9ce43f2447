"""Each scoring stage against its formula (docs/retrieval.md), with hand-computed numbers."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from memory.search import scoring


def test_vector_bonus_adds_fifteen_percent_on_bm25_hit() -> None:
    assert scoring.fuse_vector_bonus(0.6, True) == pytest.approx(0.69)
    assert scoring.fuse_vector_bonus(0.6, False) == pytest.approx(0.6)
    assert scoring.fuse_vector_bonus(-0.2, True) == 0.0


def test_rrf_is_rescaled_to_one() -> None:
    assert scoring.fuse_rrf([1, 1], 60) == pytest.approx(1.0)
    assert scoring.fuse_rrf([1, None], 60) == pytest.approx(0.5)
    # (1/63) / (2/61) = 61/126
    assert scoring.fuse_rrf([3, None], 60) == pytest.approx(61 / 126)
    assert scoring.fuse_rrf([None, None], 60) == 0.0


def test_weighted_fusion_uses_default_weights() -> None:
    assert scoring.fuse_weighted(0.8, 0.5, 0.7, 0.3) == pytest.approx(0.71)
    assert scoring.fuse_weighted(0.8, 0.0, 0.7, 0.3) == pytest.approx(0.56)


def test_recency_boost() -> None:
    # 0.5 + exp(-14/14) * 0.10 = 0.5 + 0.0367879
    assert scoring.recency_boost(0.5, 14.0, 14.0, 0.10) == pytest.approx(0.5367879, abs=1e-7)
    assert scoring.recency_boost(0.5, 0.0, 14.0, 0.10) == pytest.approx(0.6)
    assert scoring.recency_boost(0.5, None, 14.0, 0.10) == 0.5
    assert scoring.recency_boost(0.5, -3.0, 14.0, 0.10) == pytest.approx(0.6)


def test_importance_weight() -> None:
    assert scoring.importance_weight(0.8, 1.0) == pytest.approx(0.8)
    assert scoring.importance_weight(0.8, 0.5) == pytest.approx(0.68)
    assert scoring.importance_weight(0.8, 0.0) == pytest.approx(0.56)
    assert scoring.importance_weight(0.8, 7.0) == pytest.approx(0.8)


def test_length_norm() -> None:
    # 1 / (1 + 0.5 * log2(1000/500)) = 1/1.5
    assert scoring.length_norm(0.6, 1000, 500) == pytest.approx(0.4)
    assert scoring.length_norm(0.6, 2000, 500) == pytest.approx(0.3)
    # At or below the anchor nothing changes (documented choice).
    assert scoring.length_norm(0.6, 500, 500) == pytest.approx(0.6)
    assert scoring.length_norm(0.6, 40, 500) == pytest.approx(0.6)


def test_time_decay() -> None:
    # 0.8 * (0.5 + 0.5 * exp(-1)) = 0.8 * 0.6839397
    assert scoring.time_decay(0.8, 60.0, 60.0) == pytest.approx(0.5471518, abs=1e-7)
    assert scoring.time_decay(0.8, 0.0, 60.0) == pytest.approx(0.8)
    assert scoring.time_decay(0.8, 10_000.0, 60.0) == pytest.approx(0.4)
    assert scoring.time_decay(0.8, None, 60.0) == 0.8


def test_thresholds() -> None:
    assert scoring.passes_min(0.35, 0.35)
    assert not scoring.passes_min(0.349, 0.35)


def test_age_days() -> None:
    now = datetime(2026, 1, 15, 12, 0, tzinfo=timezone(timedelta(hours=8)))
    assert scoring.age_days("2026-01-01T12:00:00", now) == pytest.approx(14.0)
    assert scoring.age_days("2026-01-01", now) == pytest.approx(14.5)
    assert scoring.age_days("", now) is None
    assert scoring.age_days("not a date", now) is None


def test_apply_stages_in_documented_order() -> None:
    out = scoring.apply_stages(
        0.8,
        age=14.0,
        importance=0.5,
        length=1000,
        recency_half_life=14.0,
        recency_weight=0.10,
        length_anchor=500,
        decay_half_life=60.0,
    )
    recency = 0.8 + math.exp(-1) * 0.10
    importance = recency * 0.85
    length = importance / 1.5
    decay = length * (0.5 + 0.5 * math.exp(-14 / 60))
    assert list(out) == ["recency", "importance", "length", "decay"]
    assert out["recency"] == pytest.approx(recency)
    assert out["importance"] == pytest.approx(importance)
    assert out["length"] == pytest.approx(length)
    assert out["decay"] == pytest.approx(decay)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_mmr_keeps_the_best_of_near_duplicates() -> None:
    a = _unit(1.0, 0.0, 0.0)
    b = _unit(1.0, 0.2, 0.0)  # cosine with a ~0.98
    c = _unit(0.0, 0.0, 1.0)
    res = scoring.mmr_demote([0.8, 0.9, 0.5], [a, b, c], 0.85)
    assert res.kept == [1, 2]
    assert res.demoted == {0: 1}


def test_mmr_stops_once_the_limit_is_kept() -> None:
    a = _unit(1.0, 0.0, 0.0)
    dup = _unit(1.0, 0.1, 0.0)  # a near-duplicate of a, visited second
    c = _unit(0.0, 1.0, 0.0)
    d = _unit(0.0, 0.0, 1.0)
    res = scoring.mmr_demote([0.9, 0.8, 0.7, 0.6], [a, dup, c, d], 0.85, limit=2)
    # The duplicate is demoted on the way; d comes after the second kept item: not visited.
    assert res.kept == [0, 2]
    assert res.demoted == {1: 0}
    whole = scoring.mmr_demote([0.9, 0.8, 0.7, 0.6], [a, dup, c, d], 0.85)
    assert whole.kept[:2] == res.kept and whole.kept == [0, 2, 3]


def test_mmr_below_threshold_keeps_all() -> None:
    a = _unit(1.0, 0.0)
    b = _unit(1.0, 1.0)  # cosine ~0.707
    res = scoring.mmr_demote([0.5, 0.6], [a, b], 0.85)
    assert res.kept == [1, 0]
    assert res.demoted == {}


def test_calibrate_rescales_above_the_embedder_floor() -> None:
    # e5 (floor 0.7): (0.85 - 0.7) / 0.3 = 0.5; at or below the floor -> 0; identical -> 1.
    assert scoring.calibrate(0.85, 0.7) == pytest.approx(0.5)
    assert scoring.calibrate(0.7, 0.7) == 0.0
    assert scoring.calibrate(0.62, 0.7) == 0.0
    assert scoring.calibrate(1.0, 0.7) == pytest.approx(1.0)
    # An uncalibrated model (floor 0): the cosine itself, never negative.
    assert scoring.calibrate(0.42, 0.0) == pytest.approx(0.42)
    assert scoring.calibrate(-0.3, 0.0) == 0.0
    # Weighted fusion on the calibrated value: 0.7 * 0.5 + 0.3 * 0.4 = 0.47.
    assert scoring.fuse_weighted(scoring.calibrate(0.85, 0.7), 0.4) == pytest.approx(0.47)
