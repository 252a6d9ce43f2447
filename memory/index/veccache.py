"""The index's vector side in memory: each user's normalised vectors as one id-sorted matrix.

Brute-force KNN with numpy over this matrix is one matrix product instead of vec0's scan
(~10x faster at 100,000 chunks). The store keeps it in step with its own writes and drops it
when another connection commits.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from memory.base.lru import PoolCache

Ids = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]


def _normalised(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    rows /= np.where(norms == 0, 1.0, norms)
    return rows


# What an entry costs beside its arrays (the tuple, two array headers, the pool's key).
ENTRY_BYTES = 400
# A scan of more rows than this is split across the cores (:func:`nearest`).
SPLIT_ROWS = 20_000
_CORES = max(1, min(4, os.cpu_count() or 1))
_SCAN = ThreadPoolExecutor(max_workers=_CORES, thread_name_prefix="pcai-scan")


def one_blas_thread() -> None:
    """Run numpy's BLAS on one thread in this process (a search's products are small).

    A scan of 10,000 vectors and MMR's pairwise product take well under a millisecond on one
    core; BLAS's threads spin while they wait for each other, so when another process
    (Ollama generating, the embedder) keeps a core busy they make it slower: the
    10,000-row scan's p95 went from 1.1 ms to 4.3 ms with one core busy. Big scans are split
    across the cores by :func:`nearest` instead, whose parts never wait for each other.
    """
    threadpool_limits(limits=1, user_api="blas")


def _similarities(matrix: Matrix, q: Matrix) -> Matrix:
    """``matrix @ q``; past :data:`SPLIT_ROWS` rows, in parts on the cores at once (numpy
    lets go of the GIL in the product: a scan is bound by memory bandwidth, not one core)."""
    rows = len(matrix)
    if rows <= SPLIT_ROWS or _CORES == 1:
        return matrix @ q
    step = -(-rows // _CORES)
    parts = [_SCAN.submit(np.matmul, matrix[i : i + step], q) for i in range(0, rows, step)]
    return np.concatenate([part.result() for part in parts])


class VectorCache:
    """Per-user (ids, unit-length vectors), sorted by id, in a byte-budgeted cache.

    The least recently searched people go first when the pool's budget (``PCAI_CACHE_MB``) is
    reached; a person not cached is loaded again from ``chunk_vec`` (the cold path), which
    gives the same sorted matrix. Not locked: the store's lock is.
    """

    def __init__(self, dim: int, cache: PoolCache[str, tuple[Ids, Matrix]]) -> None:
        self.dim = dim
        self._users = cache

    def _keep(self, user_key: str, ids: Ids, matrix: Matrix) -> tuple[Ids, Matrix]:
        self._users.put(user_key, (ids, matrix), ids.nbytes + matrix.nbytes + ENTRY_BYTES)
        return ids, matrix

    def get(self, user_key: str) -> tuple[Ids, Matrix] | None:
        """The user's cached matrix, if loaded (and not evicted since)."""
        return self._users.get(user_key)

    def load(self, user_key: str, rows: Sequence[Any]) -> tuple[Ids, Matrix]:
        """Cache the user's vectors from ``(chunk_id, float32 blob)`` rows."""
        ordered = sorted(rows, key=lambda r: int(r[0]))
        ids = np.array([int(r[0]) for r in ordered], dtype=np.int64)
        if ordered:
            flat = np.frombuffer(b"".join(r[1] for r in ordered), dtype=np.float32)
            matrix = _normalised(flat.reshape(len(ordered), self.dim).copy())
        else:
            matrix = np.zeros((0, self.dim), dtype=np.float32)
        return self._keep(user_key, ids, matrix)

    def add(self, user_key: str, ids: list[int], vectors: Matrix) -> None:
        """Our own writes update a loaded matrix in place.

        Reloading every vector of the user after each appended log line cost ~20 ms a
        message at 10,000 chunks.
        """
        cached = self._users.get(user_key)
        if cached is None or not ids:
            return
        rows = _normalised(
            np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim).copy()
        )
        all_ids = np.concatenate([cached[0], np.asarray(ids, dtype=np.int64)])
        matrix = np.vstack([cached[1], rows])
        order = np.argsort(all_ids, kind="stable")
        self._keep(user_key, all_ids[order], matrix[order])

    def drop(self, ids: list[int]) -> None:
        """Forget these chunks wherever they are cached."""
        if not ids:
            return
        gone = np.asarray(ids, dtype=np.int64)
        for user_key, (cached_ids, matrix) in self._users.entries():
            keep = ~np.isin(cached_ids, gone)
            if not keep.all():
                self._keep(user_key, cached_ids[keep], matrix[keep])

    def clear(self) -> None:
        """Forget every user's matrix."""
        self._users.clear()


def nearest(ids: Ids, matrix: Matrix, vector: Matrix, limit: int) -> list[tuple[int, float]]:
    """(chunk id, cosine distance) of the ``limit`` rows of ``matrix`` nearest ``vector``."""
    if not len(ids) or limit <= 0:
        return []
    q = np.asarray(vector, dtype=np.float32)
    qn = float(np.linalg.norm(q)) or 1.0
    sims = _similarities(matrix, q / qn)
    n = min(limit, len(ids))
    top = np.argpartition(-sims, n - 1)[:n] if n < len(ids) else np.arange(len(ids))
    top = top[np.argsort(-sims[top], kind="stable")]
    return [(int(ids[i]), 1.0 - float(sims[i])) for i in top]


def nearest_within(
    ids: Ids, matrix: Matrix, vector: Matrix, limit: int, within: Ids
) -> list[tuple[int, float]]:
    """:func:`nearest`, among the rows whose id is in ``within`` (sorted ids) only."""
    mask = np.isin(ids, within, assume_unique=True)
    if not mask.any() or limit <= 0:
        return []
    q = np.asarray(vector, dtype=np.float32)
    qn = float(np.linalg.norm(q)) or 1.0
    sims = np.where(mask, _similarities(matrix, q / qn), -np.inf)
    n = min(limit, int(mask.sum()))
    top = np.argpartition(-sims, n - 1)[:n] if n < len(ids) else np.arange(len(ids))
    top = top[np.argsort(-sims[top], kind="stable")]
    return [(int(ids[i]), 1.0 - float(sims[i])) for i in top]


def pick(ids: Ids, matrix: Matrix, want: Sequence[int]) -> dict[int, Matrix]:
    """The rows of ``matrix`` for the chunk ids ``want`` (one binary search)."""
    out: dict[int, Matrix] = {}
    wanted = np.asarray(list(want), dtype=np.int64)
    pos = np.searchsorted(ids, wanted)
    for cid, p in zip(wanted, pos, strict=True):
        if p < len(ids) and ids[p] == cid:
            out[int(cid)] = matrix[p]
    return out
