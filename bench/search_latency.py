"""Search latency at 1,000-100,000 chunks, as a ratio of a plain numpy scan of the same vectors.

Usage::

    .venv/bin/python bench/search_latency.py [--sizes 1000,10000,100000] [--queries 200]
        [--cache-dir /tmp/pcai-bench-search]

Vectors that pass the thresholds (the corpus is ``bench/search_corpus.py``): 600 varied Chinese
and English memories (templates with slots: food, trips, projects, people, health, money ...)
are embedded once with the real e5 model (cached in ``--cache-dir``, never in the repository).
Every stored chunk is one of them plus a little Gaussian noise (cosine ~0.97 to its source,
~0.94 between two copies, so MMR's 0.99 still sees them as distinct), and its text is that
memory plus a short Zipf-drawn tail that stands in for the long tail of real chat vocabulary
(BM25's cost depends on it). Queries are 200 e5 *query* embeddings of questions about randomly
chosen memories, so the candidates clear ``min_score`` and the noise filter, MMR and result
building all run; the bench prints how many hits each query returned. The store holds two
users: ``tg_1`` with N chunks and ``tg_2`` with N/4 chunks of their own, written interleaved;
queries are ``tg_1``'s and every hit is checked to be ``tg_1``'s. Chunks are written straight
into the index (:meth:`IndexStore.replace_units`: this measures search, not embedding) and
searched with the searcher :func:`memory.open` builds, the bot's (``search_with_vector``: the
whole pipeline with its governance-signal stage).

The floor is a plain numpy scan of the same N vectors of ``tg_1`` (``matrix @ query``,
``argpartition`` of the top candidates, the search's depth), with numpy's BLAS on as many
threads as it takes by default: the memory-bandwidth limit of any exact vector search. The
floor is timed over all queries just before the searches and again just after them, so a
machine that gets busier slows both. (It used to be timed right before each search, but
OpenBLAS's threads spin for a while after a product and took a core from the search that
followed: +4 ms at p50 at 100,000 chunks, which the bot, whose BLAS runs on one thread, never
pays; see bench/RESULTS.md.) Query embedding is excluded. From 10,000 chunks on, a
breakdown of its parts (vector KNN, BM25 term counts, BM25 match, candidate rows and
vectors, the rest) is printed, with the p50/p95 of Chinese and English queries apart and how
many rows their kept BM25 terms match (in ``tg_1``'s own FTS table: BM25 never reads
``tg_2``'s rows).

The last line is ``search p95 at 100000 chunks: <ms> ms = <ratio>x numpy scan``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_info, threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import memory  # noqa: E402
from bench.search_corpus import BASES, Matrix, base_texts, build, embeddings, question  # noqa: E402
from memory.config import index_path  # noqa: E402
from memory.index.chunks import IndexStore  # noqa: E402

# The floor is numpy as it runs by default (BLAS on every core); PCAI runs BLAS on one thread
# and splits big scans itself (memory.index.veccache), so the floor is timed with the default.
FLOOR_BLAS = max(
    (pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1
)


def numpy_scan(matrix: Matrix, q: Matrix, k: int) -> npt.NDArray[np.intp]:
    """The floor: one pass over the matrix, then the top ``k`` in order."""
    sims = matrix @ q
    top = np.argpartition(sims, len(sims) - k)[-k:]
    return top[np.argsort(-sims[top])]


def floor(matrix: Matrix, qvecs: Matrix, depth: int) -> list[float]:
    """The numpy scan's time (ms) for each query, on BLAS's default threads, back to back."""
    times = []
    with threadpool_limits(FLOOR_BLAS, user_api="blas"):
        for v in qvecs:
            s0 = time.perf_counter()
            numpy_scan(matrix, v, depth)
            times.append((time.perf_counter() - s0) * 1000)
    return times


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values``."""
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


# The search runs BM25 on another thread while it scans the vectors (start_text).
BESIDE = "(beside the scan) "


class PartTimer:
    """Wraps a store's methods to time the parts of each search (bench-side only)."""

    def __init__(self, store: IndexStore) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.current: dict[str, float] = defaultdict(float)
        for attr, name in (
            ("vec_search", "vector KNN"),
            ("doc_counts", BESIDE + "BM25 term counts"),
            ("fts_search", BESIDE + "BM25 match"),
            ("chunks", "candidate rows"),
            ("vectors", "candidate vectors"),
        ):
            setattr(store, attr, self._wrap(getattr(store, attr), name))

    def _wrap(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.current[name] += (time.perf_counter() - t0) * 1000

        return timed

    def close(self, total_ms: float) -> None:
        """End one search: record each part and the rest of the search's own thread (waiting
        for BM25, fusion, stages, noise, MMR, hits)."""
        for name, ms in self.current.items():
            self.ms[name].append(ms)
        own = sum(ms for name, ms in self.current.items() if not name.startswith(BESIDE))
        self.ms["the rest (BM25 wait, stages, MMR, hits)"].append(total_ms - own)
        self.current.clear()


def run_size(
    size: int, bases: list[str], base_vecs: Matrix, queries: list[str], qvecs: Matrix
) -> tuple[float, float]:
    """Build, search, print one size; returns (search p95, numpy scan p95)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = index_path(Path(tmp))
        path.parent.mkdir(parents=True)
        t0 = time.perf_counter()
        matrix = build(path, size, bases, base_vecs)
        built = time.perf_counter() - t0
        # The searcher the bot uses (the library's: e5's floor, the governance-signal stage).
        library = memory.open(tmp, ensure_index=False)
        store, searcher = library.store, library.searcher
        config = searcher.config
        depth = max(config.top_k * config.candidate_multiplier, config.min_candidates)
        now = datetime(2026, 1, 1, 12, 0).astimezone()
        for q, v in zip(queries[:5], qvecs[:5], strict=True):  # warm caches and pages
            searcher.search_with_vector("tg_1", q, v, 5, now=now)
            numpy_scan(matrix, v, depth)
        parts = PartTimer(store)
        times: list[float] = []
        scans: list[float] = []
        hits: list[int] = []
        dropped: dict[str, int] = defaultdict(int)
        scans += floor(matrix, qvecs, depth)
        for q, v in zip(queries, qvecs, strict=True):
            res = searcher.search_with_vector("tg_1", q, v, 5, now=now)
            parts.close(res.search_ms)
            times.append(res.search_ms)
            hits.append(len(res.hits))
            for d in res.dropped:
                dropped[d.stage] += 1
            if any(h.chunk.user_key != "tg_1" for h in res.hits):
                raise SystemExit("a search of tg_1 returned another user's chunk")
        scans += floor(matrix, qvecs, depth)
        rows = store.count("tg_1"), store.count("tg_2")
        # After the timed loop: which BM25 terms each query kept and how many rows they match
        # (the search's own term choice; the doclists FTS5 reads grow with that sum).
        bm25_terms: list[float] = []
        bm25_rows: list[int] = []
        for q in queries:
            terms = [t for t in searcher._match("tg_1", q).split(" OR ") if t]
            bm25_terms.append(len(terms))
            bm25_rows.append(sum(store.doc_counts("tg_1", terms)[0]) if terms else 0)
        total_rows = store.count("tg_1")  # BM25 reads tg_1's own FTS table only
        library.close()
        mb = sum(f.stat().st_size for f in path.parent.iterdir()) / 1e6
    p95, scan95 = pct(times, 0.95), pct(scans, 0.95)
    print(
        f"{size:>7} chunks (tg_1 {rows[0]}, tg_2 {rows[1]}): search p50={pct(times, 0.5):.1f} "
        f"p95={p95:.1f} ms; numpy scan p50={pct(scans, 0.5):.2f} p95={scan95:.2f} ms; "
        f"ratio p95 {p95 / scan95:.1f}x (p50 {pct(times, 0.5) / pct(scans, 0.5):.1f}x); "
        f"index {mb:.1f} MB (built in {built:.0f} s)"
    )
    drops = ", ".join(f"{k} {v / len(queries):.1f}" for k, v in sorted(dropped.items()))
    print(
        f"         hits per query min/median/max {min(hits)}/{statistics.median(hits):g}/"
        f"{max(hits)}; dropped per query: {drops or 'none'}"
    )
    if size >= 10_000:  # where the time goes (at 1,000 the fixed per-query work dominates)
        for name, values in parts.ms.items():
            p50, p95_part = pct(values, 0.5), pct(values, 0.95)
            print(f"         {name:<40} p50 {p50:6.2f} ms  p95 {p95_part:6.2f} ms")
        for lang, ascii_ in (("zh", False), ("en", True)):
            own = [t for t, q in zip(times, queries, strict=True) if q.isascii() == ascii_]
            read = [
                r / total_rows
                for r, q in zip(bm25_rows, queries, strict=True)
                if q.isascii() == ascii_
            ]
            print(
                f"         {lang} queries: search p50 {pct(own, 0.5):.1f} p95 "
                f"{pct(own, 0.95):.1f} ms; rows matching the kept BM25 terms (summed) p50 "
                f"{pct(read, 0.5):.0%} p95 {pct(read, 0.95):.0%} of tg_1's {total_rows}"
            )
        print(f"         BM25 terms kept per query: mean {statistics.fmean(bm25_terms):.1f}")
    return p95, scan95


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "pcai-bench-search",
        help="where the e5 vectors of the memories and queries are kept between runs",
    )
    args = ap.parse_args()
    bases = base_texts(BASES)
    rng = random.Random(11)
    queries = [question(rng, rng.choice(bases)) for _ in range(args.queries)]
    base_vecs, qvecs = embeddings(args.cache_dir, bases, queries)
    size, p95, scan95 = 0, 0.0, 1.0
    for size in (int(s) for s in args.sizes.split(",")):
        p95, scan95 = run_size(size, bases, base_vecs, queries, qvecs)
    print(f"search p95 at {size} chunks: {p95:.1f} ms = {p95 / scan95:.1f}x numpy scan")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
