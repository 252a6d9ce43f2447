"""Search latency at 1,000-100,000 chunks, as a ratio of a plain numpy scan of the same vectors.

Usage::

    .venv/bin/python bench/search_latency.py [--sizes 1000,10000,100000] [--queries 200]
        [--cache-dir /tmp/pcai-bench-search]

Vectors that pass the thresholds: 600 varied Chinese and English memories (templates with
slots: food, trips, projects, people, health, money ...) are embedded once with the real e5
model (cached in ``--cache-dir``, never in the repository). Every stored chunk is one of them
plus a little Gaussian noise (cosine ~0.97 to its source, ~0.94 between two copies, so MMR's
0.99 still sees them as distinct), and its text is that memory plus a short Zipf-drawn tail
that stands in for the long tail of real chat vocabulary (BM25's cost depends on it). Queries
are 200 e5 *query* embeddings of questions about randomly chosen memories, so the candidates
clear ``min_score`` and the noise filter, MMR and result building all run; the bench prints
how many hits each query returned. The store holds two users: ``tg_1`` with N chunks and
``tg_2`` with N/4 chunks of their own, written interleaved; queries are ``tg_1``'s and every
hit is checked to be ``tg_1``'s. Chunks are written straight into the index
(:meth:`IndexStore.replace_units`: this measures search, not embedding) and searched with
the searcher :func:`memory.open` builds, the bot's (``search_with_vector``: the whole pipeline
with its governance-signal stage).

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
import hashlib
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_info, threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import memory  # noqa: E402
from memory.config import index_path  # noqa: E402
from memory.index.chunks import IndexStore, NewChunk  # noqa: E402
from memory.index.embedders import E5Embedder, normalise  # noqa: E402

Matrix = npt.NDArray[np.float32]
DIM = 384
# The floor is numpy as it runs by default (BLAS on every core); PCAI runs BLAS on one thread
# and splits big scans itself (memory.index.veccache), so the floor is timed with the default.
FLOOR_BLAS = max(
    (pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1
)
BASES = 600
# Per-dimension noise: |noise| ~ 0.013 * sqrt(384) = 0.25, i.e. cosine ~0.97 to the source.
NOISE = 0.013
USERS = ("tg_1", "tg_2")

ZH = (
    "我們決定{p}專案改用{db}，因為{why}",
    "我很喜歡{food}，每週大概吃{n}次，最愛{city}那家",
    "{name}的生日是{m}月{d}日，記得提前買{gift}",
    "待辦：{p}的部署要在第{n}週完成，負責人是{name}",
    "教訓：{p}上線前一定要先備份{db}的資料，上次掉了{n}天的紀錄",
    "我住在{city}，通勤大約{n}十分鐘，通常搭{transit}",
    "下個月要去{city}旅行，預算{n}萬元，想住{hotel}",
    "醫生說我的{body}要多注意，每天{habit}{n}十分鐘",
    "這個月{bill}花了{n}千元，比上個月多，要記得{saving}",
    "我的興趣是{hobby}，週末常和{name}一起去",
)
EN = (
    "We decided to move the {p} project to {db} because it is simpler to operate",
    "My manager {name} prefers short weekly reports on {day}s",
    "Trip to {city} planned for week {n}; book the {hotel} early",
    "Lesson learned: always pin {db} versions in {p} before upgrading",
    "I go {hobby} on {day} mornings, about {n} hours each time",
    "{name}'s birthday is on {m}/{d}; they would like a {gift}",
    "The doctor told me to watch my {body} and to keep {habit} every day",
    "I spent {n}00 dollars on {bill} this month, I should {saving}",
    "My favourite food is {food}, especially the place in {city}",
    "Reminder: renew the {bill} contract before {m}/{d}, ask {name} first",
)
SLOTS = {
    "p": ("pcai", "atlas", "hermes", "orion", "kappa", "lumen", "nova", "delta"),
    "db": ("PostgreSQL", "SQLite", "MySQL", "Redis", "DuckDB", "MongoDB"),
    "why": ("比較好維護", "團隊比較熟", "效能夠用", "部署簡單", "授權比較寬鬆"),
    "food": ("牛肉麵", "壽司", "咖哩飯", "小籠包", "拉麵", "dumplings", "pho", "tacos"),
    "name": ("老蔡", "小王", "Alice", "Bob", "陳經理", "Carol", "阿明", "Dave"),
    "city": ("台北", "台中", "高雄", "Tokyo", "Berlin", "Kyoto", "Lisbon", "花蓮"),
    "gift": ("蛋糕", "書", "耳機", "花", "scarf", "board game"),
    "transit": ("捷運", "公車", "腳踏車", "機車"),
    "hotel": ("民宿", "飯店", "ryokan", "hostel", "Airbnb"),
    "body": ("膝蓋", "血壓", "腰", "blood sugar", "back", "sleep"),
    "habit": ("散步", "伸展", "游泳", "walking", "stretching", "cycling"),
    "bill": ("電費", "房租", "保險", "phone plan", "internet", "gym membership"),
    "saving": ("少叫外送", "把訂閱取消", "cancel unused subscriptions", "cook at home"),
    "hobby": ("爬山", "攝影", "彈吉他", "hiking", "photography", "bouldering"),
    "day": ("Monday", "Wednesday", "Friday", "Saturday", "Sunday"),
}
ZH_QUESTION = ("之前說過{q}，是什麼？", "你還記得{q}的事情嗎？", "關於{q}，我當時怎麼說？")
EN_QUESTION = ("What did I say about {q}?", "Remind me: {q}?", "Anything about {q}?")


def base_texts(count: int, seed: int = 5) -> list[str]:
    """``count`` distinct memories, half Chinese, half English, from the templates."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:
        template = rng.choice(ZH if len(out) % 2 == 0 else EN)
        values = {k: rng.choice(v) for k, v in SLOTS.items()}
        out[
            template.format(
                n=rng.randint(1, 9), m=rng.randint(1, 12), d=rng.randint(1, 28), **values
            )
        ] = None
    return list(out)


def question(rng: random.Random, text: str) -> str:
    """A question about (the first part of) a memory, in its language."""
    if text.isascii():
        words = text.split()
        return rng.choice(EN_QUESTION).format(q=" ".join(words[: max(4, len(words) * 2 // 3)]))
    return rng.choice(ZH_QUESTION).format(q=text[: max(6, len(text) * 2 // 3)])


# The Zipf tail: 3,000 English and 3,000 Chinese words whose frequencies follow Zipf's law
# (rank r drawn with weight 1/r); Chinese words are pairs of Zipf-weighted characters.
VOCAB = 3000
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def zipf_vocab(seed: int = 3) -> tuple[list[str], list[str], list[float]]:
    """(English words, Chinese words, Zipf weights), deterministic for a seed."""
    rng = random.Random(seed)
    en: list[str] = []
    seen: set[str] = set()
    while len(en) < VOCAB:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        if word not in seen:
            seen.add(word)
            en.append(word)
    chars = [chr(0x4E00 + i) for i in rng.sample(range(0x5000), 1500)]
    char_w = [1.0 / (r + 1) for r in range(len(chars))]
    zh: list[str] = []
    while len(zh) < VOCAB:
        word = "".join(rng.choices(chars, weights=char_w, k=2))
        if word not in seen:
            seen.add(word)
            zh.append(word)
    return en, zh, [1.0 / (r + 1) for r in range(VOCAB)]


_ZIPF = zipf_vocab()


def tail(rng: random.Random, zh: bool) -> str:
    """4-10 Zipf-drawn words: the rare vocabulary around a memory in real chat text."""
    en, zhw, weights = _ZIPF
    words = rng.choices(zhw if zh else en, weights=weights, k=rng.randint(4, 10))
    return "".join(words) if zh else " ".join(words)


def embeddings(cache: Path, texts: list[str], queries: list[str]) -> tuple[Matrix, Matrix]:
    """e5 passage vectors of ``texts`` and query vectors of ``queries`` (cached on disk)."""
    digest = hashlib.sha256("\n".join([E5Embedder.MODEL, *texts, "", *queries]).encode())
    path = cache / f"e5-{digest.hexdigest()[:16]}.npz"
    if path.exists():
        with np.load(path) as saved:
            return saved["passages"], saved["queries"]
    started = time.perf_counter()
    embedder = E5Embedder()
    passages = embedder.embed_passages(texts)
    qvecs = np.vstack([embedder.embed_query(q) for q in queries]).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, passages=passages, queries=qvecs)
    print(
        f"embedded {len(texts)} memories and {len(queries)} queries with e5 in "
        f"{time.perf_counter() - started:.0f} s (cached in {path})"
    )
    return passages, qvecs


def build(path: Path, n: int, bases: list[str], base_vecs: Matrix, seed: int = 7) -> Matrix:
    """A store with ``n`` chunks of ``tg_1`` and ``n // 4`` of ``tg_2``; returns tg_1's vectors."""
    # The e5 model's name, so the library opens this index as its own (another name rebuilds).
    store = IndexStore(path, E5Embedder.MODEL, DIM)
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    start = datetime(2025, 1, 1, 9, 0)
    counts = {"tg_1": n, "tg_2": n // 4}
    own: list[Matrix] = []
    batch = 2000
    for lo in range(0, n, batch):
        for user in USERS:
            part = range(
                lo * counts[user] // n, min(counts[user], (lo + batch) * counts[user] // n)
            )
            if not part:
                continue
            chunks, which = [], []
            for i in part:
                b = rng.randrange(len(bases))
                when = start + timedelta(minutes=17 * i)
                text = f"{bases[b]} {tail(rng, not bases[b].isascii())}"
                which.append(b)
                chunks.append(
                    NewChunk(
                        user_key=user,
                        kind="log",
                        path=f"memory/{when:%Y-%m-%d}.md",
                        unit_id=f"{user}-r{i}",
                        ordinal=0,
                        content_hash=f"h{i}",
                        section="",
                        date=f"{when:%Y-%m-%dT%H:%M:%S}",
                        line_start=i,
                        line_end=i,
                        importance=0.5,
                        status="active",
                        tokens=len(text) // 2,
                        refs=(f"r{i}",),
                        text=f"user: {text}",
                    )
                )
            noise = nrng.standard_normal((len(which), DIM)).astype(np.float32) * NOISE
            vectors = normalise(base_vecs[which] + noise)
            store.replace_units(user, f"bulk{lo}", [], chunks, vectors)
            if user == "tg_1":
                own.append(vectors)
    store.close()
    return np.ascontiguousarray(np.vstack(own))


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
