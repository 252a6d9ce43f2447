"""Recall in conversation: the latest line alone vs the search formed from the conversation.

Usage::

    .venv/bin/python bench/conversation_recall.py [--data ../shared/bench/locomo10.json]
        [--convs 5] [--cache-dir DIR] [--turns 3] [--concat] [--grid]

The tuning set for issue 15 item 4 (never the held-out Chinese dialogues). Each LoCoMo
conversation is written and indexed as ``bench/locomo.py`` does (or a data dir built by
``bench/locomo.py --keep-cache`` is reused with ``--cache-dir``). Its questions, in the file's
order, are one user's dialogue: the question is the latest line and the user's previous
``--turns`` questions are the recent lines before it (the file orders them by the sessions
their evidence lies in, so neighbouring questions are often about the same time and people,
and sometimes not: context that does not help must not hurt either). Every line's query vector
is embedded once, as in the bot, and the context reuses the earlier lines' vectors.

Both searches go through :meth:`memory.search.hybrid.HybridSearcher.search_with_vector` (the
path of ``MemoryService.search``) and :func:`agent.query.fuse`, as the turn does. Recall@k =
share of a question's evidence turns among the top k results' refs (LoCoMo's definition).
``--concat`` adds the reference the issue measured: one search with the latest line and the
recent lines embedded together as one query (an extra, longer embedding per turn). ``--grid``
prints the variants the defaults of :class:`agent.query.ConversationQuery` were chosen from.

Conversations 1-5 are the tuning set (the default); the last line is
``conversation recall@1 / @10: latest-only X/Y, conversation Z/W``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from locomo import DEFAULT_DATA, ingest, normalise_evidence, pct, user_key  # noqa: E402

import memory  # noqa: E402
from agent.query import ConversationQuery, context_vector, fuse  # noqa: E402
from memory import MemoryConfig  # noqa: E402
from memory.index.embedders import Vector  # noqa: E402
from memory.search.hybrid import SearchHit  # noqa: E402

DEPTH = 10


@dataclasses.dataclass(slots=True)
class Asked:
    """One question as the latest line of its conversation's dialogue."""

    key: str
    now: datetime
    text: str
    vector: Vector
    context: list[Vector]
    context_text: list[str]
    gold: set[str]
    embed_ms: float


@dataclasses.dataclass(slots=True)
class Tally:
    """Recall@1 and recall@10 sums of one way of searching."""

    r1: float = 0.0
    r10: float = 0.0
    n: int = 0

    def add(self, hits: list[SearchHit], gold: set[str]) -> None:
        ranked = list(dict.fromkeys(r for h in hits for r in h.chunk.refs))
        self.r1 += len(gold & set(ranked[:1])) / len(gold)
        self.r10 += len(gold & set(ranked[:DEPTH])) / len(gold)
        self.n += 1

    def figures(self) -> tuple[float, float]:
        return self.r1 / max(self.n, 1), self.r10 / max(self.n, 1)


def dialogue(
    embed: Callable[[str], Vector],
    key: str,
    now: datetime,
    conv: dict[str, Any],
    known: set[str],
    turns: int,
) -> list[Asked]:
    """The conversation's questions as consecutive lines, each with its earlier lines."""
    out: list[Asked] = []
    said: list[tuple[str, Vector]] = []
    for qa in conv["qa"]:
        text = str(qa["question"])
        t0 = time.perf_counter()
        vec = embed(text)
        ms = (time.perf_counter() - t0) * 1000
        gold = set(normalise_evidence(qa.get("evidence", []), known))
        if gold:
            ctx = said[-turns:] if turns > 0 else []
            out.append(
                Asked(key, now, text, vec, [v for _, v in ctx], [t for t, _ in ctx], gold, ms)
            )
        said.append((text, vec))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--convs", type=int, default=5, help="the first N conversations (tuning)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="a bench/locomo.py data dir")
    ap.add_argument("--turns", type=int, default=ConversationQuery().turns)
    ap.add_argument("--concat", action="store_true", help="also the one-text reference")
    ap.add_argument("--grid", action="store_true", help="also the variants tuned over")
    args = ap.parse_args()
    if not args.data.is_file():
        ap.error(f"LoCoMo data not found at {args.data}; pass --data PATH/locomo10.json")
    data = json.loads(args.data.read_text(encoding="utf-8"))[: args.convs]
    built = args.cache_dir is not None and (args.cache_dir / "done.json").exists()
    data_dir = args.cache_dir or Path(tempfile.mkdtemp(prefix="pcai-convq-"))
    library = memory.open(data_dir, settings=MemoryConfig(), ensure_index=False)
    searcher, embedder = library.searcher, library.embedder
    meta: dict[str, Any] = json.loads((data_dir / "done.json").read_text()) if built else {}
    t0 = time.perf_counter()
    asked: list[Asked] = []
    for conv in data:
        key = user_key(conv)
        if key not in meta:
            last, known = ingest(library, key, conv["conversation"])
            meta[key] = {"last": last.isoformat(), "known": sorted(known)}
        now = datetime.fromisoformat(meta[key]["last"]).astimezone()
        asked += dialogue(
            embedder.embed_query, key, now, conv, set(meta[key]["known"]), args.turns
        )
    print(f"{len(data)} conversations, {len(asked)} questions, {time.perf_counter() - t0:.0f} s")

    def search(a: Asked, vec: Vector, text: list[tuple[int, float]] | None) -> list[SearchHit]:
        return searcher.search_with_vector(
            a.key, a.text, vec, DEPTH, now=a.now, text_hits=text
        ).hits

    chosen = ConversationQuery(turns=args.turns)
    weights = sorted({chosen.weight, 0.3, 0.5, 1.0}) if args.grid else [chosen.weight]
    fusions = [(chosen.context_rank_weight, chosen.rank_offset)]
    if args.grid:
        fusions += [(w, c) for w in (0.5, 0.75, 1.0) for c in (1.0, 2.0, 5.0, 60.0)]
        fusions = list(dict.fromkeys(fusions))
    latest, concat = Tally(), Tally()
    mixed = {w: Tally() for w in weights}
    fused = {(w, f): Tally() for w in weights for f in fusions}
    with_context = 0
    extra_ms: list[float] = []  # the mixed search the turn adds (the chosen weight)
    for a in asked:
        # As the turn does: one BM25 query for the latest line's search and the mixed one.
        text = searcher.text_hits(a.key, a.text, DEPTH)
        own = search(a, a.vector, text)
        latest.add(own, a.gold)
        with_context += bool(a.context)
        if args.concat:
            joined = "\n".join([*a.context_text, a.text])
            concat.add(search(a, embedder.embed_query(joined), None), a.gold)
        for w in weights:
            vec = context_vector(a.vector, a.context, w)
            t0 = time.perf_counter()
            other = search(a, vec, text) if vec is not None else []
            if vec is not None and w == chosen.weight:
                extra_ms.append((time.perf_counter() - t0) * 1000)
            mixed[w].add(other or own, a.gold)
            for crw, offset in fusions:
                cfg = dataclasses.replace(chosen, context_rank_weight=crw, rank_offset=offset)
                fused[(w, (crw, offset))].add(fuse(own, other, DEPTH, cfg), a.gold)
    library.close()
    if args.cache_dir is None:
        shutil.rmtree(data_dir, ignore_errors=True)

    def row(name: str, t: Tally) -> None:
        r1, r10 = t.figures()
        print(f"{name:<48} recall@1={r1:.3f} recall@10={r10:.3f}")

    print(f"questions with context: {with_context}/{len(asked)}; turns={args.turns}")
    row("latest line only", latest)
    if args.concat:
        row("recent lines + latest as one text (+1 embedding)", concat)
    for w in weights:
        row(f"mixed vector only, weight {w}", mixed[w])
        for crw, offset in fusions:
            row(
                f"  fused, weight {w}, ctx rank weight {crw}, offset {offset}",
                fused[(w, (crw, offset))],
            )
    embed95, extra95 = pct([a.embed_ms for a in asked], 0.95), pct(extra_ms, 0.95)
    print(
        f"load {Path('/proc/loadavg').read_text().split()[0]}: query embedding p95 "
        f"{embed95:.1f} ms, the added search p95 {extra95:.1f} ms = {extra95 / embed95:.2f}x"
    )
    a1, a10 = latest.figures()
    b1, b10 = fused[(chosen.weight, fusions[0])].figures()
    print(
        f"conversation recall@1 / @10: latest-only {a1:.3f}/{a10:.3f}, "
        f"conversation {b1:.3f}/{b10:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
