"""A person's vectors load by their own chunks' keys: the work does not grow with other people."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.base.lru import MB, CachePool
from memory.index.chunks import IndexStore, NewChunk

DIM = 8


def chunk(user: str, unit: str) -> NewChunk:
    return NewChunk(user, "memory", "m.md", unit, 0, unit, "", "", 1, 1, 5, "active", 3, (), unit)


def add(store: IndexStore, user: str, n: int, seed: int) -> None:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    store.replace_units(user, "m.md", [], [chunk(user, f"{user}-{j}") for j in range(n)], rows)


def load_steps(store: IndexStore, user: str) -> int:
    """SQLite's virtual-machine steps (in hundreds) a cold load of ``user``'s vectors takes."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    store._vec_cache.clear()  # the cold path
    store.conn.set_progress_handler(count, 100)
    try:
        ids, matrix = store.user_vectors(user)
    finally:
        store.conn.set_progress_handler(None, 100)
    assert len(ids) == len(matrix) == 20
    return steps[0]


def test_loading_a_persons_vectors_does_not_read_everyone_elses(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "index.sqlite", "test", DIM, CachePool(MB))
    try:
        add(store, "cli_me", 20, 1)
        alone = load_steps(store, "cli_me")
        for i in range(20):
            add(store, f"cli_other{i}", 500, 10 + i)
        among = load_steps(store, "cli_me")
        mine = np.random.default_rng(1).standard_normal((20, DIM)).astype(np.float32)
        mine /= np.linalg.norm(mine, axis=1, keepdims=True)
        assert np.allclose(store.user_vectors("cli_me")[1], mine, atol=1e-6)  # the same vectors
    finally:
        store.close()
    # vec0 scanned all 10,020 vectors for ``WHERE user_key = ?``: 2,307 steps against 7 alone.
    assert among <= 2 * alone + 5, (alone, among)
