"""Every per-user cache under one byte budget (PCAI_CACHE_MB): bounded, and exact when cold."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memory
from bot.app import memory_config
from bot.errors import SettingsError
from bot.settings import load_settings
from memory.base.lru import MB, CachePool
from memory.index.chunks import IndexStore, NewChunk
from memory.index.embedders import E5Embedder

DIM = 16
USERS = ("cli_a", "cli_b", "cli_c", "cli_d")


def chunk(user: str, path: str, unit: str) -> NewChunk:
    return NewChunk(user, "memory", path, unit, 0, unit, "", "", 1, 1, 5, "active", 3, (), unit)


def vectors(seed: int, n: int) -> npt.NDArray[np.float32]:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def test_the_least_recently_used_entry_of_any_cache_goes_first() -> None:
    pool = CachePool(100)
    vecs, parsed = pool.cache("vectors"), pool.cache("parsed")
    vecs.put("a", "A", 40)
    parsed.put("b", "B", 40)
    assert vecs.get("a") == "A"  # "a" is now the most recently used: "b" goes first
    vecs.put("c", "C", 40)
    assert (vecs.get("a"), parsed.get("b"), vecs.get("c")) == ("A", None, "C")
    assert pool.used == 80 and pool.evicted == 1
    vecs.put("huge", "H", 101)  # bigger than the budget: not kept, nothing evicted for it
    assert vecs.get("huge") is None and vecs.get("a") == "A" and pool.evicted == 1


def fill(store: IndexStore, user: str, path: str, units: list[str], seed: int) -> None:
    rows = vectors(seed, len(units))
    store.replace_units(user, path, [], [chunk(user, path, u) for u in units], rows)


def test_the_vector_cache_holds_no_more_than_its_budget(tmp_path: Path) -> None:
    pool = CachePool(2 * MB)
    store = IndexStore(tmp_path / "index.sqlite", "test", 384, pool)
    try:
        for i, user in enumerate(USERS * 2):  # 8 users of 1,000 vectors: 1.5 MB each
            units = [f"{i}-{j}" for j in range(1000)]
            rows = np.random.default_rng(i).standard_normal((1000, 384)).astype(np.float32)
            name = f"{user}{i}"
            store.replace_units(name, "m.md", [], [chunk(name, "m.md", u) for u in units], rows)
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        q = np.ones(384, dtype=np.float32)
        for i, user in enumerate(USERS * 2):
            assert len(store.vec_search(f"{user}{i}", q, 5)) == 5
        held = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
        tracemalloc.stop()
    finally:
        store.close()
    assert held < 3 * MB  # unbounded, the eight matrices stayed: 12 MB


# One op: (user, kind, size or unit index, seed). "add" writes ``n`` chunks to a user's
# file, "drop" deletes one of the user's files, "search" compares the two stores.
OPS = st.lists(
    st.tuples(
        st.sampled_from(USERS),
        st.sampled_from(("add", "drop", "search", "search")),
        st.integers(1, 40),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=25, deadline=None)
@given(ops=OPS)
def test_search_finds_the_same_whether_the_cache_hits_or_misses(
    ops: list[tuple[str, str, int, int]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("stores")
    # Room for every user (always a hit after the first search) ...
    warm = IndexStore(folder / "warm.sqlite", "test", DIM, CachePool(64 * MB))
    # ... and for about one user's 40 vectors: loads and evictions all the time.
    tight_pool = CachePool(40 * DIM * 4 + 800)
    cold = IndexStore(folder / "cold.sqlite", "test", DIM, tight_pool)
    try:
        for n, (user, kind, size, seed) in enumerate(ops):
            path = f"f{seed % 3}.md"
            for store in (warm, cold):
                if kind == "add":
                    fill(store, user, path, [f"{n}-{j}" for j in range(size)], seed)
                elif kind == "drop":
                    store.delete_path(user, path)
            q = vectors(seed + 1, 1)[0]
            for other in USERS:  # every user searched: the tight pool keeps evicting
                assert warm.vec_search(other, q, 10) == cold.vec_search(other, q, 10)
                assert tight_pool.used <= tight_pool.budget
                picked = warm.vectors([1, 2, 3, 5, 8], user_key=other)
                again = cold.vectors([1, 2, 3, 5, 8], user_key=other)
                assert picked.keys() == again.keys()
                assert all(np.array_equal(picked[k], again[k]) for k in picked)
    finally:
        warm.close()
        cold.close()


def test_pcai_cache_mb_is_the_budget_every_cache_shares(
    tmp_path: Path, embedder: E5Embedder
) -> None:
    settings = load_settings({"PCAI_DATA_DIR": str(tmp_path), "PCAI_CACHE_MB": "3"})
    with memory.open(tmp_path, embedder=embedder, settings=memory_config(settings)) as library:
        assert library.store.caches is library.service.caches
        assert library.store.caches.budget == 3 * MB
    with pytest.raises(SettingsError, match="PCAI_CACHE_MB"):
        load_settings({"PCAI_DATA_DIR": str(tmp_path), "PCAI_CACHE_MB": "-1"})
