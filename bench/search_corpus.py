"""The search bench's corpus: varied memories with real e5 vectors, and a two-user index of them.

600 Chinese and English memories from templates with slots (food, trips, projects, people,
health, money ...) are embedded once with the real e5 model and cached (never in the
repository). :func:`build` writes N chunks for ``tg_1`` and N/4 for ``tg_2``, interleaved,
each one of the memories plus a short Zipf-drawn tail of made-up words (the long tail of real
chat vocabulary, which BM25's cost depends on) and a vector near its memory's (Gaussian
noise: cosine ~0.97 to the source). Questions about randomly chosen memories are embedded as
e5 *queries*, so a search's candidates clear the thresholds. Used by
``bench/search_latency.py``.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.index.chunks import IndexStore, NewChunk  # noqa: E402
from memory.index.embedders import E5Embedder, normalise  # noqa: E402

Matrix = npt.NDArray[np.float32]
DIM = 384
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
