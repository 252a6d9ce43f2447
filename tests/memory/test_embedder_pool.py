"""The e5 embedder's handle pool: concurrent calls give the same vectors as sequential ones."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from memory.index.embedders import E5Embedder

QUERIES = [
    "我早上喝什麼茶？",
    "when is the project deadline",
    "上次去陽明山是什麼時候",
    "Caroline's support group",
] * 3
PASSAGES = [[f"第 {i} 段：今天討論了部署計畫 deployment step {i}"] * 3 for i in range(6)]


def test_concurrent_calls_match_sequential_ones_and_the_pool_stays_small() -> None:
    embedder = E5Embedder(instances=2)
    expected_q = [embedder.embed_query(q) for q in QUERIES]
    expected_p = [embedder.embed_passages(p) for p in PASSAGES]

    with ThreadPoolExecutor(max_workers=6) as pool:
        got_q = list(pool.map(embedder.embed_query, QUERIES))
        got_p = list(pool.map(embedder.embed_passages, PASSAGES))

    for want, got in zip(expected_q, got_q, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
    for want, got in zip(expected_p, got_p, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
    assert embedder._created <= 2  # never more handles than asked for


def test_a_single_instance_pool_serialises_and_still_answers() -> None:
    embedder = E5Embedder(instances=1)
    with ThreadPoolExecutor(max_workers=4) as pool:
        vectors = list(pool.map(embedder.embed_query, QUERIES))
    assert all(v.shape == (384,) for v in vectors)
    assert embedder._created == 1
