"""MMR and daily-log neighbours: records embedded with each other as context are no copies."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import numpy as np

from memory import Memory
from memory.search.scoring import mmr_demote
from tests.memory.daylogs import write_day_log

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
QUERY = "Where did Melanie go camping with her family?"
# s2 and s3 are said by two people and say different things; each is indexed with the other
# as context, so their vectors are nearly one.
DAY = [
    ("user", "Morning! The weather finally turned warm this week", "s1"),
    ("user", "Melanie told me she went camping with her family at the lake", "s2"),
    ("bot", "Camping by a lake sounds lovely, did the kids enjoy the tent?", "s3"),
    ("user", "They loved the tent, and then we roasted marshmallows", "s4"),
    ("user", "Unrelated, but the car needs new tyres before winter", "s5"),
    ("user", "My sister sent photos of her new garden in Porto", "s6"),
]


def _hits(library: Memory, k: int) -> list[str]:
    res = library.service.searcher.search_explained("tg_m", QUERY, k, now=NOW)
    return [h.chunk.refs[0] for h in res.hits]


def test_neighbouring_records_are_not_demoted_as_near_copies(library: Memory) -> None:
    write_day_log(library, "tg_m", "2026-02-20", DAY)
    searcher = library.service.searcher
    # The original design's threshold (0.99 ships): short records share enough context to
    # pass it; LoCoMo's longer ones pass 0.99 (570 demotions, every one such a pair).
    threshold = 0.85
    searcher.config = replace(searcher.config, mmr_threshold=threshold)
    store = searcher.store
    order = store.file_order("tg_m", ["memory/2026-02-20.md"])["memory/2026-02-20.md"]
    ids = {c.refs[0]: cid for cid, c in store.chunks(order).items() if c.refs}
    vectors = store.vectors([ids["s2"], ids["s3"]])
    # The premise: the two records' index vectors are closer than MMR's threshold.
    assert float(np.dot(vectors[ids["s2"]], vectors[ids["s3"]])) > threshold
    hits = _hits(library, 3)
    assert {"s2", "s3"} <= set(hits), hits
    res = searcher.search_explained("tg_m", QUERY, 3, now=NOW)
    assert not [d for d in res.dropped if d.stage == "mmr"]


def test_mmr_still_demotes_a_copy_that_shares_no_context() -> None:
    same = np.ones(4, dtype=np.float32) / 2
    other = np.array([1, 0, 0, 0], dtype=np.float32)
    vectors = [same, same, other]
    plain = mmr_demote([0.9, 0.8, 0.7], vectors, 0.99)
    assert plain.demoted == {1: 0}
    # Records 0 and 1 embedded with each other as context: both kept.
    kept = mmr_demote([0.9, 0.8, 0.7], vectors, 0.99, shared_context=lambda i, j: {i, j} == {0, 1})
    assert kept.kept == [0, 1, 2] and not kept.demoted
