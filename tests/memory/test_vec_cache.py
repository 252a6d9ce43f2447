"""The in-memory vector cache stays exactly what the database holds across our own writes."""

from __future__ import annotations

import numpy as np

from memory import Memory
from memory.base.fsutil import atomic_write_text, read_text
from memory.index import veccache
from memory.index.chunks import IndexStore

USER = "cli_cache"
TEXTS = [
    "我每天早上喝烏龍茶，不加糖",
    "The project deadline for atlas is the end of March",
    "週末常去陽明山爬山，通常星期六早上出發",
    "My manager prefers short weekly reports on Fridays",
]


def nearest(store: IndexStore, library: Memory, query: str) -> list[tuple[int, float]]:
    vec = library.embedder.embed_query(query)
    return [(cid, round(dist, 5)) for cid, dist in store.vec_search(USER, vec, 50)]


def test_cache_matches_a_fresh_store_after_adds_forgets_and_hand_edits(
    library: Memory,
) -> None:
    entries = [library.service.remember(USER, t) for t in TEXTS]
    store = library.store
    nearest(store, library, "早上喝什麼")  # warm the cache

    library.service.remember(USER, "明天下午三點要去牙醫，記得帶健保卡")
    library.service.forget(USER, entries[1].id)
    path = library.service.paths(USER).memory_md
    atomic_write_text(path, read_text(path).replace("烏龍茶", "綠茶"))  # a hand edit
    library.search(USER, "綠茶")  # the change detector picks the edit up

    fresh = IndexStore(store.path, library.embedder.name, library.embedder.dim)
    try:
        for query in ("早上喝什麼", "weekly report", "看牙醫要帶什麼", "deadline"):
            assert nearest(store, library, query) == nearest(fresh, library, query)
        ids = {cid for cid, _ in nearest(store, library, "deadline")}
        assert len(ids) == len(TEXTS)  # 4 remembered + 1 new - 1 forgotten
    finally:
        fresh.close()


def test_a_scan_split_across_cores_finds_what_one_product_finds() -> None:
    rng = np.random.default_rng(3)
    rows = veccache.SPLIT_ROWS * 2 + 7  # split into parts, the last one short
    matrix = rng.standard_normal((rows, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = np.arange(1, rows + 1, dtype=np.int64)
    q = matrix[rows - 3] + 0.01  # its nearest row sits in the last part
    found = veccache.nearest(ids, matrix, q, 10)
    sims = matrix @ (q / np.linalg.norm(q))
    assert [cid for cid, _ in found] == [int(ids[i]) for i in np.argsort(-sims)[:10]]
    assert found[0][0] == rows - 2
