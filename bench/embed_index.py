"""Indexing rate and query-embedding latency of the local (embedded e5) embedder.

Usage::

    .venv/bin/python bench/embed_index.py [--entries 500] [--queries 200] [--threads N]
        [--batch 32]

Writes ``--entries`` synthetic memories (Chinese, English and mixed, 10-120 characters) into
one user's MEMORY.md in a temporary data folder, indexes them through the real Indexer
(parse, chunk, embed, FTS5 + sqlite-vec insert in one transaction) and prints entries/s,
then embeds ``--queries`` short zh/en queries one at a time, as search does, and prints the
p50/p95 latency. ``--threads`` is the e5 engine's OpenMP thread count (PCAI's default: two,
one on a single core); the machine's load average is printed because it moves every figure.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import memory
from memory.base.fsutil import atomic_write_text
from memory.base.markdown import Entry, MemoryDocument, render_memory
from memory.index.embedders import E5Embedder

USER = "bench_embed"
ZH = [
    "我每天早上都喝一杯黑咖啡",
    "最喜歡的顏色是藍色",
    "週末常去陽明山爬山",
    "下週三要跟客戶開會討論合約",
    "女兒的生日是三月十二日",
    "資料庫每天凌晨三點備份",
    "對花生過敏，點餐時要注意",
    "正在學日文，目標是明年考N2",
]
EN = [
    "We deploy to production every Friday afternoon",
    "prefers tea over coffee after 3pm",
    "the staging server is called kestrel",
    "allergic to peanuts",
    "running a half marathon in October",
    "standup is at 9:30 on weekdays",
    "likes jazz, especially Bill Evans",
    "the VPN config lives in the ops repo",
]
QUERIES = [
    "咖啡",
    "我喜歡什麼顏色？",
    "when do we deploy?",
    "週末做什麼",
    "peanut allergy",
    "生日是哪天",
    "what is the staging server called",
    "日文考試 goal",
]


def synthetic_entries(n: int, rng: random.Random) -> list[Entry]:
    """``n`` memories mixing Chinese, English and both, of varied length."""
    out = []
    for i in range(n):
        parts = [rng.choice(ZH + EN) for _ in range(rng.randint(1, 4))]
        text = "，".join(parts) if i % 3 == 0 else "; ".join(parts)
        out.append(Entry(id=f"m-bench-{i:06d}", text=f"{text} (#{i})", section=f"S{i % 7}"))
    return out


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=500)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--threads", type=int, default=None, help="default: PCAI's")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="pcai-bench-") as tmp:
        embedder = E5Embedder(batch_size=args.batch, threads=args.threads)
        t0 = time.perf_counter()
        embedder.embed_query("warm up 預熱")
        load_s = time.perf_counter() - t0
        library = memory.open(Path(tmp) / "botmemory", embedder=embedder)
        try:
            entries = synthetic_entries(args.entries, rng)
            doc = MemoryDocument(entries=tuple(entries))
            atomic_write_text(library.service.paths(USER).memory_md, render_memory(doc))

            t0 = time.perf_counter()
            stats = library.indexer.sync_user(USER)
            index_s = time.perf_counter() - t0
            chunks = library.store.count(USER)
            if stats.added != args.entries:
                print(f"FAIL: indexed {stats.added} of {args.entries} entries")
                return 1

            latencies = []
            for i in range(args.queries):
                q = f"{QUERIES[i % len(QUERIES)]} {i}"
                t0 = time.perf_counter()
                embedder.embed_query(q)
                latencies.append((time.perf_counter() - t0) * 1000.0)
        finally:
            library.close()

    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    threads = args.threads or "default"
    print(f"embedder        {embedder.name} ({embedder.dim} d), {threads} thread(s)")
    print(f"machine         {os.cpu_count()} CPUs, load average {load1:.2f}")
    print(f"model load      {load_s * 1000:.0f} ms (first query included)")
    print(
        f"indexing        {args.entries} entries ({chunks} chunks) in {index_s:.2f} s "
        f"= {args.entries / index_s:.1f} entries/s"
    )
    print(
        f"query embedding p50 {percentile(latencies, 0.5):.1f} ms, "
        f"p95 {percentile(latencies, 0.95):.1f} ms, mean {statistics.fmean(latencies):.1f} ms "
        f"over {len(latencies)} queries"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
