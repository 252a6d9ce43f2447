"""The reply lift: the daily-log record after a matching question is the answer to it.

A turn that asks ("What's the new one about?") shares the words of a question about the
thing, while the reply that says it ("It's a mix of drama and romance!") often shares none.
The record right after one of the best matches that asks scores at least ``share`` times the
question's fused score (docs/retrieval.md, "Staged scoring"; chosen on LoCoMo conversations
1-5, bench/RESULTS.md "Reply lift").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

# What may close a question after its mark: ``"What?"``, ``（真的嗎？）``, ``「好嗎？」``.
_CLOSERS = ")\"'”」』"


def asks(text: str) -> bool:
    """Whether a record's spoken line (its first line; a "[shares image: ...]" line may follow
    it) ends with a question mark, blanks and closing quotes or brackets after it.

    Stripped, not matched: a pattern anchored at the end re-scans the blanks after every
    question mark (``"?" + " " * 100_000``: quadratic), ``rstrip`` reads them once.
    """
    first = text.lstrip().partition("\n")[0]
    return first.rstrip().rstrip(_CLOSERS).rstrip().endswith(("?", "？"))


def reply_lift(
    questions: Iterable[tuple[int, str, float]],
    order: Mapping[str, Sequence[int]],
    share: float,
) -> dict[int, float]:
    """The lifted score of each reply, from ``(chunk id, path, fused score)`` matches that ask.

    ``order`` gives each file's chunk ids in file order; the last record of a file, or a
    match missing from it, lifts nothing.
    """
    lift: dict[int, float] = {}
    after: dict[str, dict[int, int]] = {}  # each file's record -> the record after it
    for chunk_id, path, score in questions:
        if path not in after:
            ids = order.get(path, [])
            after[path] = dict(pairwise(ids))
        reply = after[path].get(chunk_id)
        if reply is not None:
            lift[reply] = max(lift.get(reply, 0.0), share * score)
    return lift
