"""The neighbour lift: records next to the best matches in a day's log score near them.

A daily-log record is one turn of a conversation: the turn a question is about is often the
reply next to the best match (which may only be the question that prompted it). The
``span`` records either side of each best match get at least ``share ** distance`` of that
match's fused score (docs/retrieval.md, "Staged scoring"; chosen on LoCoMo conversations 1-5,
bench/RESULTS.md "Neighbour lift").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from memory.index.chunks import Chunk


def neighbour_lift(
    best: Iterable[tuple[int, str, float]],
    order: Mapping[str, Sequence[int]],
    span: int,
    share: float,
) -> dict[int, float]:
    """The lifted score of each neighbour, from ``(chunk id, path, fused score)`` matches.

    ``order`` gives each file's chunk ids in file order; a match missing from it lifts nothing.
    """
    lift: dict[int, float] = {}
    for chunk_id, path, score in best:
        ids = order.get(path, [])
        if chunk_id not in ids:
            continue
        at = list(ids).index(chunk_id)
        for pos in range(max(0, at - span), min(len(ids), at + span + 1)):
            if pos != at:
                lifted = share ** abs(pos - at) * score
                lift[ids[pos]] = max(lift.get(ids[pos], 0.0), lifted)
    return lift


class _Scored(Protocol):
    """A candidate: its chunk and its score so far."""

    chunk: Chunk
    score: float


S = TypeVar("S", bound=_Scored)


def best_of(
    cands: Sequence[S],
    kind: str,
    statuses: tuple[str, ...],
    n: int,
    noise: Callable[[Chunk], str | None] | None = None,
) -> list[S]:
    """The ``n`` best-scored searchable candidates of one chunk kind (what a lift starts from),
    leaving out the ones ``noise`` names (judged best first, only until ``n`` are found)."""
    chosen = (c for c in cands if c.chunk.kind == kind and c.chunk.status in statuses)
    ranked = sorted(chosen, key=lambda c: c.score, reverse=True)
    if noise is not None:
        return list(itertools.islice((c for c in ranked if not noise(c.chunk)), n))
    return ranked[:n]
