"""Search latency on synthetic stores of 1,000 / 10,000 / 100,000 chunks (no query embedding).

Usage::

    .venv/bin/python bench/search_latency.py [--sizes 1000,10000,100000] [--queries 200]

Each store holds one user's chunks, half Chinese and half English sentences built from word
lists, with random unit vectors (384 dimensions, like e5-small), written through
:meth:`IndexStore.replace_units` (this measures search, not embedding). Queries are real
sentences run through :meth:`HybridSearcher.search_with_vector` with a random query vector, so
the full pipeline (KNN, BM25, fusion, stages, noise filter, MMR) is timed. Prints p50/p95 and
the index file size per store; the last line is ``search p95 at 100000 chunks: <ms> ms``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.config import RetrievalConfig  # noqa: E402
from memory.embedders import E5Embedder  # noqa: E402
from memory.index import IndexStore, NewChunk  # noqa: E402
from memory.search import HybridSearcher  # noqa: E402

DIM = 384
EN = [
    "coffee",
    "tea",
    "morning",
    "meeting",
    "project",
    "deadline",
    "cat",
    "dog",
    "park",
    "hiking",
    "trip",
    "Japan",
    "Taipei",
    "birthday",
    "dinner",
    "sister",
    "brother",
    "mother",
    "father",
    "book",
    "movie",
    "music",
    "guitar",
    "piano",
    "running",
    "gym",
    "doctor",
    "dentist",
    "appointment",
    "weekend",
    "holiday",
    "beach",
    "mountain",
    "train",
    "flight",
    "hotel",
    "budget",
    "salary",
    "laptop",
    "phone",
    "camera",
    "garden",
    "flower",
    "rain",
    "snow",
    "summer",
    "winter",
    "school",
    "class",
    "exam",
    "teacher",
    "friend",
]
ZH = [
    "咖啡",
    "早餐",
    "會議",
    "專案",
    "截止",
    "貓咪",
    "小狗",
    "公園",
    "爬山",
    "旅行",
    "日本",
    "台北",
    "生日",
    "晚餐",
    "姐姐",
    "弟弟",
    "媽媽",
    "爸爸",
    "書本",
    "電影",
    "音樂",
    "吉他",
    "鋼琴",
    "跑步",
    "健身",
    "醫生",
    "牙醫",
    "預約",
    "週末",
    "假期",
    "海邊",
    "高山",
    "火車",
    "航班",
    "飯店",
    "預算",
    "薪水",
    "筆電",
    "手機",
    "相機",
    "花園",
    "下雨",
    "下雪",
    "夏天",
    "冬天",
    "學校",
    "考試",
    "老師",
    "朋友",
]


def sentence(rng: random.Random, zh: bool) -> str:
    """A synthetic sentence of 8-20 words from the 50-word lists (the "small" vocabulary)."""
    words = [rng.choice(ZH if zh else EN) for _ in range(rng.randint(8, 20))]
    return ("我" + "".join(words) + "。") if zh else ("I " + " ".join(words) + ".")


# The "zipf" vocabulary: 3,000 English and 3,000 Chinese content words whose frequencies
# follow Zipf's law (word of rank r drawn with weight 1/r), mixed with function words at
# about the rate of chat text (every other English token, a third of Chinese characters).
# Chinese words are pairs of characters drawn Zipf-weighted from 1,500 CJK characters, so
# characters too have a few very common ones and a long tail, as in real text.
VOCAB = 3000
EN_FUNCTION = [
    "I",
    "the",
    "a",
    "to",
    "and",
    "was",
    "my",
    "it",
    "of",
    "in",
    "is",
    "that",
    "for",
    "on",
    "with",
    "you",
    "me",
    "we",
    "at",
    "so",
    "but",
]
ZH_FUNCTION = list("我的了是在很也就都有你他們這個")
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


def zipf_sentence(rng: random.Random, zh: bool) -> str:
    """A synthetic sentence of 8-20 Zipf-drawn content words with function words between."""
    en, zhw, weights = _ZIPF
    words = rng.choices(zhw if zh else en, weights=weights, k=rng.randint(8, 20))
    out: list[str] = []
    for word in words:
        if zh and rng.random() < 0.6:
            out.append(rng.choice(ZH_FUNCTION))
        elif not zh and rng.random() < 0.5:
            out.append(rng.choice(EN_FUNCTION))
        out.append(word)
    return ("".join(out) + "。") if zh else (" ".join(out) + ".")


SENTENCES = {"zipf": zipf_sentence, "small": sentence}


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random L2-normalised float32 vectors."""
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build(path: Path, n: int, seed: int = 7, vocab: str = "zipf") -> IndexStore:
    """A store with ``n`` chunks of user ``tg_1`` (plus a small second user)."""
    store = IndexStore(path, "synthetic", DIM)
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    start = datetime(2025, 1, 1, 9, 0)
    batch = 2000
    for lo in range(0, n, batch):
        chunks = []
        for i in range(lo, min(n, lo + batch)):
            when = start + timedelta(minutes=17 * i)
            text = SENTENCES[vocab](rng, i % 2 == 0)
            chunks.append(
                NewChunk(
                    user_key="tg_1",
                    kind="log",
                    path=f"memory/{when:%Y-%m-%d}.md",
                    unit_id=f"r{i}",
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
        store.replace_units("tg_1", f"bulk{lo}", [], chunks, unit_vectors(nrng, len(chunks)))
    return store


def pct(values: list[float], q: float) -> float:
    """The q-quantile of ``values``."""
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--vocab",
        choices=sorted(SENTENCES),
        default="zipf",
        help="zipf: 3,000+3,000 Zipf-distributed words (default); small: 50+49 words",
    )
    args = ap.parse_args()
    rng = random.Random(11)
    nrng = np.random.default_rng(11)
    p95 = 0.0
    size = 0
    embedder = E5Embedder()  # only for the searcher's type; queries are pre-made vectors
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "index.sqlite"
            t0 = time.perf_counter()
            store = build(path, size, vocab=args.vocab)
            built = time.perf_counter() - t0
            searcher = HybridSearcher(store, embedder, RetrievalConfig())
            now = datetime(2026, 1, 1, 12, 0).astimezone()
            queries = [SENTENCES[args.vocab](rng, i % 2 == 0)[:40] for i in range(args.queries)]
            qvecs = unit_vectors(nrng, args.queries)
            for q, v in zip(queries[:5], qvecs[:5], strict=True):  # warm the page cache
                searcher.search_with_vector("tg_1", q, v, 5, now=now)
            times = [
                searcher.search_with_vector("tg_1", q, v, 5, now=now).search_ms
                for q, v in zip(queries, qvecs, strict=True)
            ]
            store.close()
            mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6
            p95 = pct(times, 0.95)
            print(
                f"{size:>7} chunks: search p50={pct(times, 0.5):.1f} ms p95={p95:.1f} ms "
                f"index {mb:.1f} MB (built in {built:.0f} s)"
            )
    print(f"search p95 at {size} chunks: {p95:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
