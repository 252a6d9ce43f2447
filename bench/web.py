"""Latency of the memory page at 10,000 memories: the memories page and a search (p95).

Usage::

    .venv/bin/python bench/web.py [--entries 10000] [--requests 50] [--data-dir DIR]

Writes ``--entries`` synthetic memories (Chinese, English and mixed) into one user's
MEMORY.md in a temporary data folder, indexes them with the real embedded e5 model, serves the
page with the same :class:`~bot.web.server.WebServer` the bot starts (uvicorn in this event
loop), logs in through a one-time link, then times ``--requests`` GETs of the memories page
(every entry parsed, health and fade date computed, the first 100 shown) and as many searches
(query embedding + the hybrid pipeline + the page) over real HTTP on 127.0.0.1. The last line
is ``web p95 at <n> memories: page <ms> ms, search <ms> ms``. ``--data-dir`` keeps the data
folder, so a second run finds the entries indexed (indexing is incremental) and starts at once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.embed_index import QUERIES, percentile, synthetic_entries
from bot.app import Services, build_services
from bot.settings import load_settings
from bot.web.server import WebServer
from memory.embedders import E5Embedder
from memory.fsutil import atomic_write_text
from memory.markdown import MemoryDocument, render_memory

USER = "bench_web"


async def timed(client: httpx.AsyncClient, urls: list[str], expect: str) -> list[float]:
    """Milliseconds of each GET, after checking the page is the one asked for."""
    out = []
    for url in urls:
        t0 = time.perf_counter()
        r = await client.get(url)
        out.append((time.perf_counter() - t0) * 1000.0)
        if r.status_code != 200 or expect not in r.text:
            raise SystemExit(f"FAIL: {url} answered {r.status_code}")
    return out


async def measure(services: Services, requests: int) -> tuple[list[float], list[float]]:
    """Serve the page and time the memories page and searches over HTTP."""
    web = WebServer.for_services(services)
    if not await web.start():
        raise SystemExit("FAIL: the page did not start")
    try:
        base = f"http://127.0.0.1:{web.port}"
        token = web.link(USER, "en").split("t=", 1)[1]
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            r = await client.post("/login", data={"t": token})
            if r.status_code != 303:
                raise SystemExit(f"FAIL: login answered {r.status_code}")
            await timed(client, ["/", "/?q=warm"], "PCAI")  # first request: templates, caches
            page = await timed(client, ["/"] * requests, 'class="entry')
            queries = [f"/?q={QUERIES[i % len(QUERIES)]}" for i in range(requests)]
            search = await timed(client, queries, 'class="results"')
    finally:
        await web.stop()
    return page, search


def main() -> int:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--data-dir", type=Path, help="keep the data here (default: a temp dir)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="pcai-bench-web-") as tmp:
        data = args.data_dir or Path(tmp) / "botmemory"
        settings = load_settings({"PCAI_DATA_DIR": str(data), "PCAI_WEB_PORT": "0"})
        services = build_services(settings, embedder=E5Embedder(batch_size=32))
        try:
            services.memory.ensure_index()
            doc = MemoryDocument(entries=tuple(synthetic_entries(args.entries, rng)))
            atomic_write_text(services.memory.paths(USER).memory_md, render_memory(doc))
            t0 = time.perf_counter()
            services.memory.indexer.sync_user(USER)
            index_s = time.perf_counter() - t0
            page, search = asyncio.run(measure(services, args.requests))
        finally:
            services.close()
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine         {os.cpu_count()} CPUs, load average {load1:.2f}")
    print(f"indexing        {args.entries} memories in {index_s:.1f} s (setup, not timed below)")
    for name, values in (("memories page", page), ("search", search)):
        print(
            f"{name:<15} p50 {percentile(values, 0.5):.0f} ms, "
            f"p95 {percentile(values, 0.95):.0f} ms over {len(values)} requests"
        )
    print(
        f"web p95 at {args.entries} memories: page {percentile(page, 0.95):.0f} ms, "
        f"search {percentile(search, 0.95):.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
