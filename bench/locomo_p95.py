"""Search p95 of two LoCoMo data dirs side by side: one without idle summaries and with the
session lift off (main's index and settings), one with them and the lift on (the defaults).

Usage::

    .venv/bin/python bench/locomo_p95.py --plain DIR --summaries DIR [--passes 2]

Both dirs are ones ``bench/locomo.py --cache-dir`` built (the second one without
``--no-summaries``). One process, the same query vectors, every question searched in both,
the order alternating per question and per pass, so a machine that gets busier or quieter
slows both alike. Last line: ``search p95 summaries+lift / plain: <ratio>x (p50 <ratio>x)``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from locomo import DEFAULT_DATA, normalise_evidence, user_key
from locomo_variants import pct

import memory
from memory import MemoryConfig, RetrievalConfig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plain", type=Path, required=True, help="data dir without summaries")
    ap.add_argument("--summaries", type=Path, required=True, help="data dir with summaries")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--passes", type=int, default=2)
    args = ap.parse_args()
    off = MemoryConfig(retrieval=RetrievalConfig(session_hits=0))
    libs = {
        "plain": memory.open(args.plain, settings=off, ensure_index=False),
        "summaries+lift": memory.open(args.summaries, ensure_index=False),
    }
    meta = json.loads((args.summaries / "done.json").read_text())
    asked = []
    for conv in json.loads(args.data.read_text(encoding="utf-8")):
        key = user_key(conv)
        now = datetime.fromisoformat(meta[key]["last"]).astimezone()
        for qa in conv["qa"]:
            gold = normalise_evidence(qa.get("evidence", []), set(meta[key]["known"]))
            if gold:
                qvec = libs["plain"].embedder.embed_query(str(qa["question"]))
                asked.append((key, now, str(qa["question"]), qvec, set(gold)))
    names = list(libs)
    ms: dict[str, list[float]] = {n: [] for n in names}
    r10: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(args.passes):
        for i, (key, now, question, qvec, gold) in enumerate(asked):
            for name in names if (i + rep) % 2 == 0 else names[::-1]:
                res = libs[name].searcher.search_with_vector(key, question, qvec, 10, now=now)
                ms[name].append(res.search_ms)
                if rep == 0:
                    ranked = list(dict.fromkeys(r for h in res.hits for r in h.chunk.refs))[:10]
                    r10[name].append(len(gold & set(ranked)) / len(gold))
    for name in names:
        print(
            f"{name:<16} searches={len(ms[name])} p50={pct(ms[name], 0.5):.2f} ms "
            f"p95={pct(ms[name], 0.95):.2f} ms recall@10={sum(r10[name]) / len(r10[name]):.3f}"
        )
    for lib in libs.values():
        lib.close()
    p95 = pct(ms["summaries+lift"], 0.95) / pct(ms["plain"], 0.95)
    p50 = pct(ms["summaries+lift"], 0.5) / pct(ms["plain"], 0.5)
    print(f"search p95 summaries+lift / plain: {p95:.2f}x (p50 {p50:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
