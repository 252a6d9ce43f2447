"""The session lift: a matching idle summary lifts the candidate records it summarises.

An idle summary (``auto_summaries.md``) says in a few sentences what a whole stretch of
conversation was about, so it can match a question that no single turn of it matches well.
Its heading names the stretch (:mod:`memory.base.spans`). The daily-log records of that
stretch that are already candidates, i.e. the ones closest to the query by their stored
vectors or by BM25, gain ``weight`` times the summary's fused score; the other records of
the stretch gain nothing (bench/RESULTS.md, "Session lift").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memory.base.spans import parse_span


def session_lift(
    summaries: Iterable[tuple[str, float]],
    records: Sequence[tuple[int, str]],
    weight: float,
) -> dict[int, float]:
    """What each record gains, from ``(summary heading, fused score)`` matches and
    ``(chunk id, record timestamp)`` candidates.

    A summary whose heading names no stretch (a compaction block, a hand-written one) lifts
    nothing; a record in the stretches of several gains from the best of them only.
    """
    spans = [(span, score) for heading, score in summaries if (span := parse_span(heading))]
    gain: dict[int, float] = {}
    for span, score in spans:
        for chunk_id, timestamp in records:
            if span.holds(timestamp):
                gain[chunk_id] = max(gain.get(chunk_id, 0.0), weight * score)
    return gain
