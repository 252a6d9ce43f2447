"""The staged scoring pipeline (docs/retrieval.md, "Staged scoring"), one pure function a stage.

Order: calibration -> fusion -> min_score -> recency boost -> importance weight -> length
normalisation -> time decay -> hard minimum -> noise filter -> the retrieval score ->
low-priority demotion -> MMR. Every parameter comes from :class:`memory.config.RetrievalConfig`;
the function defaults quoted below are the original design's numbers, and where the shipped
ones differ the docs say why (docs/retrieval.md, "Defaults chosen by measurement").

Scale: the cosine is first calibrated to the embedder (:func:`calibrate`: 0 = as similar as
unrelated text, 1 = identical), then every fusion method returns a score in [0, 1.15] whose
meaning is "how similar", so the thresholds (min 0.3 after fusion, hard minimum 0.35
after the stages) keep their sense.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt


def calibrate(similarity: float, floor: float) -> float:
    """Rescale an embedder's cosine so unrelated text scores ~0: ``max(0, (cos - f) / (1 - f))``.

    ``f`` is the embedder's similarity floor (:func:`memory.index.embedders.similarity_floor`): 0.7
    for multilingual-e5, whose cosines sit in 0.7-1.0 for related and unrelated text alike
    (its model card), 0.0 for models whose cosines already spread over [0, 1] (then this is
    ``max(cos, 0)``). Fusion works on the rescaled value, so the thresholds after it (min 0.3,
    hard minimum 0.35) separate related from unrelated text whatever the model.
    """
    if floor >= 1.0:
        return 0.0
    return max(0.0, (similarity - floor) / (1.0 - floor))


def fuse_vector_bonus(similarity: float, bm25_hit: bool, bonus: float = 0.15) -> float:
    """The original design's "RRF": vector score as the base, ``*(1 + bonus)`` on a BM25 hit.

    ``score = max(sim, 0) * (1.15 if bm25_hit else 1)``; default bonus 0.15. The original
    design calls this RRF, but it is a vector score with a keyword bonus, hence the honest name.
    """
    return max(similarity, 0.0) * (1.0 + bonus if bm25_hit else 1.0)


def fuse_rrf(ranks: Sequence[int | None], k: int = 60) -> float:
    """True reciprocal-rank fusion, rescaled so a first place in every list scores 1.

    ``score = sum(1 / (k + rank_i)) / (n / (k + 1))`` over the ``n`` lists (None = not found);
    default k 60.
    """
    if not ranks:
        return 0.0
    total = sum(1.0 / (k + r) for r in ranks if r is not None)
    return total / (len(ranks) / (k + 1.0))


def fuse_weighted(
    similarity: float, bm25_norm: float, vector_weight: float = 0.7, bm25_weight: float = 0.3
) -> float:
    """Linear fusion with the default weights: ``0.7 * sim + 0.3 * bm25_norm``.

    ``bm25_norm`` is the BM25 score divided by the best BM25 score of the query (0 when BM25
    did not find the chunk), so both parts lie in [0, 1]. Weights are renormalised to sum 1.
    """
    total = vector_weight + bm25_weight
    if total <= 0:
        return 0.0
    return (vector_weight * max(similarity, 0.0) + bm25_weight * bm25_norm) / total


def recency_boost(score: float, age_days: float | None, half_life: float, weight: float) -> float:
    """``score += exp(-ageDays / 14) * 0.10`` (defaults half_life 14, weight 0.10).

    An unknown age (a chunk without a date) gets no boost; a future date counts as age 0.
    """
    if age_days is None or half_life <= 0:
        return score
    return score + math.exp(-max(age_days, 0.0) / half_life) * weight


def importance_weight(score: float, importance: float) -> float:
    """``score *= 0.7 + 0.3 * importance``; importance is clamped to [0, 1] (1.0 -> x1.0)."""
    return score * (0.7 + 0.3 * min(max(importance, 0.0), 1.0))


def length_norm(score: float, length: int, anchor: int = 500) -> float:
    """``score *= 1 / (1 + 0.5 * log2(len / 500))`` for text longer than the anchor (500).

    Text of ``anchor`` characters or fewer is left alone (factor 1): the formula would reward
    short text (and turn negative below anchor/4), while its purpose is only to stop long
    entries from winning on keyword density.
    """
    if anchor <= 0 or length <= anchor:
        return score
    return score / (1.0 + 0.5 * math.log2(length / anchor))


def time_decay(score: float, age_days: float | None, half_life: float = 60.0) -> float:
    """``score *= 0.5 + 0.5 * exp(-ageDays / 60)``: old memories fade to a floor of x0.5.

    An unknown age is left alone; a future date counts as age 0.
    """
    if age_days is None or half_life <= 0:
        return score
    return score * (0.5 + 0.5 * math.exp(-max(age_days, 0.0) / half_life))


def passes_min(score: float, minimum: float) -> bool:
    """The thresholds: ``min_score`` (0.3) after fusion, ``hard_min_score`` (0.35) after decay."""
    return score >= minimum


def age_days(date: str, now: datetime) -> float | None:
    """Days between a chunk's ISO date (``YYYY-MM-DD[THH:MM[:SS]]``) and ``now``; None if none.

    A naive date is read in ``now``'s time zone (daily logs are written in local time).
    """
    text = date.strip()
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text[:25])
    except ValueError:
        try:
            when = datetime.fromisoformat(text[:10])
        except ValueError:
            return None
    if when.tzinfo is None and now.tzinfo is not None:
        when = when.replace(tzinfo=now.tzinfo)
    elif when.tzinfo is not None and now.tzinfo is None:
        when = when.replace(tzinfo=None)
    return (now - when).total_seconds() / 86400.0


@dataclass(frozen=True, slots=True)
class MMRResult:
    """MMR's order: ``kept`` indexes first, then ``demoted`` ones (near-duplicates)."""

    kept: list[int]
    demoted: dict[int, int]  # demoted index -> index of the better item it duplicates


def mmr_demote(
    scores: Sequence[float],
    vectors: Sequence[npt.NDArray[np.float32] | None],
    threshold: float = 0.85,
    limit: int | None = None,
    shared_context: Callable[[int, int], bool] | None = None,
) -> MMRResult:
    """MMR: an item whose cosine to a better kept item is > 0.85 is demoted.

    Items are visited best score first; each is kept unless it is a near-duplicate of an item
    already kept, so of a group of near-duplicates the best-scoring one stays in place. Demoted
    items go after every kept item (in score order), not away: a short list still fills up.
    Vectors are assumed L2-normalised; an item without a vector is never a duplicate.
    With ``limit``, the visit stops once that many are kept: the items after them would only
    be listed after the first ``limit`` (the search keeps its top k), so they are left out.
    ``shared_context(i, j)`` names pairs whose vectors are close by construction, not because
    the two say the same (neighbouring daily-log records are embedded with each other as
    context): such a pair is never a near-duplicate. It is asked only of pairs over the
    threshold.
    """
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    kept: list[int] = []
    demoted: dict[int, int] = {}
    present = [(i, v) for i, v in enumerate(vectors) if v is not None]
    with_vec = [i for i, _ in present]
    row_of = {i: r for r, i in enumerate(with_vec)}
    # Every pair's cosine in one product: the pairwise loop cost milliseconds per search.
    matrix = np.stack([v for _, v in present]) if present else np.zeros((0, 0))
    sims = matrix @ matrix.T
    kept_rows: list[int] = []  # rows of the kept items that have a vector, in kept order
    kept_with_vec: list[int] = []
    for i in order:
        if limit is not None and len(kept) >= limit:
            break
        dup = None
        r = row_of.get(i)
        if r is not None and kept_rows:
            over = (kept_with_vec[int(j)] for j in np.flatnonzero(sims[r, kept_rows] > threshold))
            dup = next(
                (j for j in over if shared_context is None or not shared_context(i, j)), None
            )
        if dup is None:
            kept.append(i)
            if r is not None:
                kept_rows.append(r)
                kept_with_vec.append(i)
        else:
            demoted[i] = dup
    return MMRResult(kept=kept, demoted=demoted)


def apply_stages(
    score: float,
    *,
    age: float | None,
    importance: float,
    length: int,
    recency_half_life: float,
    recency_weight: float,
    length_anchor: int,
    decay_half_life: float,
) -> dict[str, float]:
    """Run the four score-changing stages in order; returns the score after each one."""
    steps: list[tuple[str, Callable[[float], float]]] = [
        ("recency", lambda s: recency_boost(s, age, recency_half_life, recency_weight)),
        ("importance", lambda s: importance_weight(s, importance)),
        ("length", lambda s: length_norm(s, length, length_anchor)),
        ("decay", lambda s: time_decay(s, age, decay_half_life)),
    ]
    out: dict[str, float] = {}
    for name, fn in steps:
        score = fn(score)
        out[name] = score
    return out


# The retrieval score's weights (docs/retrieval.md, "Retrieval score"): relevance, recency,
# access frequency, user weight. Access is a tie-breaker, held below the relevance spread: on
# e5's calibrated scale relevant and unrelated memories differ by a few hundredths, so the
# original 0.2 let a memory's past uses outrank what the question is about (issue 24).
RETRIEVAL_WEIGHTS = (0.4, 0.25, 0.01, 0.15)
# A chunk that is not a MEMORY.md entry (a log line, a summary) has no access count and no
# weight of its own: it counts as never used and of the default weight 5.
NEUTRAL_WEIGHT = 5


def signal_recency(age_days: float | None, rate: float = 0.05) -> float:
    """``recency_decay = exp(-0.05 * days_since_created)``.

    ``rate`` 0 holds the term at 1 for every chunk (the pipeline's own recency stage already
    counts age; bench/RESULTS.md); an unknown age counts as new, a future date as age 0.
    """
    if age_days is None or rate <= 0:
        return 1.0
    return math.exp(-rate * max(age_days, 0.0))


def access_frequency(access_count: int, saturation: int = 20) -> float:
    """``access_frequency = min(access_count / 20, 1)``."""
    if saturation <= 0:
        return 0.0
    return min(max(access_count, 0) / saturation, 1.0)


def weight_factor(user_weight: int) -> float:
    """``user_weight / 10``, the weight clamped to 0-10."""
    return max(0, min(10, user_weight)) / 10.0


def retrieval_score(
    relevance: float,
    recency: float,
    frequency: float,
    weight: float,
    weights: tuple[float, float, float, float] = RETRIEVAL_WEIGHTS,
) -> float:
    """The retrieval score, used when ranking with a query::

        retrieval_score = 0.4 * relevance + 0.25 * recency_decay
                          + 0.01 * access_frequency + 0.15 * user_weight

    ``relevance`` is the pipeline's score after its own stages (0 to about 1.1: the hybrid
    search score), the other three are :func:`signal_recency`,
    :func:`access_frequency` and :func:`weight_factor`. With no access counts and one weight
    (a store of logs only, as LoCoMo is) the score is a rising function of relevance alone, so
    the stage keeps the pipeline's order.
    """
    w_rel, w_rec, w_acc, w_wt = weights
    return w_rel * max(relevance, 0.0) + w_rec * recency + w_acc * frequency + w_wt * weight


def priority_factor(score: float, status: str, low_priority_factor: float = 0.8) -> float:
    """``score *= 0.8`` for a ``low_priority`` entry: still found, ranked lower.

    Applied after the thresholds, so a fading memory is demoted below an equally relevant
    active one but never dropped by this stage; every other status is left alone.
    """
    return score * low_priority_factor if status == "low_priority" else score
