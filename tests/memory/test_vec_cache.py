"""The in-memory vector cache stays exactly what the database holds across our own writes."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from memory import Memory
from memory.base.fsutil import atomic_write_text, read_text
from memory.base.lru import CachePool
from memory.index import veccache
from memory.index.chunks import IndexStore, NewChunk

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


def _chunk(user: str, n: int) -> NewChunk:
    return NewChunk(
        user_key=user,
        kind="memory",
        path="MEMORY.md",
        unit_id=f"u{n}",
        ordinal=0,
        content_hash=f"h{n}",
        section="",
        date="",
        line_start=n,
        line_end=n,
        importance=0.5,
        status="active",
        tokens=3,
        refs=(),
        text=f"note {n}",
    )


class _Paused:
    """Holds the store's reader connection at a statement (``at``) until ``go``."""

    def __init__(self, at: str) -> None:
        self.at = at
        self.reading = threading.Event()
        self.go = threading.Event()

    def __call__(self, statement: str) -> None:
        if self.at in statement and not self.reading.is_set():
            self.reading.set()
            self.go.wait(10)


def _cold_store(tmp_path: Path, chunks: int) -> tuple[IndexStore, np.ndarray]:
    """A store that keeps no vectors in memory (budget 0): every read is the cold path."""
    store = IndexStore(tmp_path / "index.sqlite", "test-model", 8, CachePool(0))
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((chunks, 8)).astype(np.float32)
    store.replace_units(USER, "MEMORY.md", [], [_chunk(USER, n) for n in range(chunks)], vectors)
    store.replace_units("cli_other", "MEMORY.md", [], [_chunk("cli_other", 0)], vectors[:1])
    store.user_vectors("cli_other")  # the reader connection is open from here on
    return store, vectors


def test_a_cold_load_leaves_the_store_to_everyone_else(tmp_path: Path) -> None:
    """A person's vectors read from disk (900 lookups, 15-25 ms) do not hold the store's lock:
    another person's search goes on meanwhile."""
    store, _ = _cold_store(tmp_path, 20)
    paused = _Paused("chunk_vec")  # in the middle of the read
    store._reader.set_trace_callback(paused)
    loading = threading.Thread(target=store.user_vectors, args=(USER,))
    loading.start()
    try:
        assert paused.reading.wait(5)
        counted: list[int] = []
        other = threading.Thread(target=lambda: counted.append(store.count("cli_other")))
        other.start()
        other.join(5)
        assert counted == [1]  # answered while the load is held in the middle
    finally:
        paused.go.set()
        loading.join(10)
        store.close()


def test_a_write_during_a_cold_load_is_in_what_it_returns(tmp_path: Path) -> None:
    """The rows read outside the lock are dropped when the person's chunks changed meanwhile:
    the loaded matrix is what the database holds after the write."""
    store, vectors = _cold_store(tmp_path, 20)
    paused = _Paused("COMMIT")  # the rows read, not yet loaded
    store._reader.set_trace_callback(paused)
    got: list[tuple[np.ndarray, np.ndarray]] = []
    loading = threading.Thread(target=lambda: got.append(store.user_vectors(USER)))
    loading.start()
    try:
        assert paused.reading.wait(5)
        writer = threading.Thread(
            target=store.replace_units,
            args=(USER, "MEMORY.md", ["u3"], [_chunk(USER, 99)], vectors[:1]),
        )
        writer.start()
        writer.join(5)
        assert not writer.is_alive()  # the write did not wait for the load
    finally:
        paused.go.set()
        loading.join(10)
    ids, matrix = got[0]
    store._reader.set_trace_callback(None)
    fresh_ids, fresh_matrix = store.user_vectors(USER)
    assert len(ids) == 20 and ids.tolist() == fresh_ids.tolist()  # 20 - u3 + u99
    assert np.array_equal(matrix, fresh_matrix)
    store.close()
