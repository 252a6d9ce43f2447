"""bench/locomo.py's variants: other retrieval settings on the same index and query vectors.

Every question is searched with the run's own settings ("default") and with each variant in
turn, the order rotating from one question to the next, so a machine that gets busier or
quieter during the run slows them all alike and each variant's search p95 compares with the
default's p95 taken in the same pass.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

# (user key, clock, question, query vector, gold dia_ids, category, split name)
Asked = tuple[str, datetime, str, npt.NDArray[np.float32], set[str], int, str]


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values``."""
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def recall_line(name: str, r10: dict[bool, list[float]]) -> str:
    """ "<name> n=.. recall@10 all=.. cat1-4=.." from recall@10 lists keyed by "cat 1-4?"."""
    every = r10[True] + r10[False]
    return (
        f"{name:<28} n={len(every):<5} recall@10 all={sum(every) / max(len(every), 1):.3f} "
        f"cat1-4={sum(r10[True]) / max(len(r10[True]), 1):.3f}"
    )


def parse_sets(base: Any, items: list[str]) -> dict[str, Any]:
    """Parse "field=value" strings into overrides of a RetrievalConfig, typed like its fields."""
    out: dict[str, Any] = {}
    for item in items:
        if not item:
            continue
        name, value = item.split("=", 1)
        current = getattr(base, name)
        out[name] = (value == "1") if isinstance(current, bool) else type(current)(value)
    return out


def run_variants(searcher: Any, retrieval: Any, asked: list[Asked], specs: list[str]) -> None:
    """Search every question with the default and each ``name:field=v,...`` variant; print
    each one's recall@10 (all, and per split) and search p50/p95, the p95 also as a ratio of
    the default's. ``floor=x`` overrides the embedder's similarity floor (calibration)."""
    default_floor = searcher.floor
    configs: list[tuple[str, Any, float]] = [("default", retrieval, default_floor)]
    for spec in specs:
        name, _, rest = spec.partition(":")
        items = rest.split(",")
        floors = [float(i.split("=", 1)[1]) for i in items if i.startswith("floor=")]
        items = [i for i in items if not i.startswith("floor=")]
        config = dataclasses.replace(retrieval, **parse_sets(retrieval, items))
        configs.append((name, config, floors[-1] if floors else default_floor))
    r10: dict[str, dict[bool, list[float]]] = {n: {True: [], False: []} for n, _, _ in configs}
    split: dict[str, dict[str, dict[bool, list[float]]]] = {
        n: defaultdict(lambda: {True: [], False: []}) for n, _, _ in configs
    }
    ms: dict[str, list[float]] = {n: [] for n, _, _ in configs}
    for i, (key, now, question, qvec, g, cat, part) in enumerate(asked):
        turn = i % len(configs)
        for name, config, floor in configs[turn:] + configs[:turn]:
            searcher.config, searcher.floor = config, floor
            res = searcher.search_with_vector(key, question, qvec, 10, now=now)
            ms[name].append(res.search_ms)
            ranked = list(dict.fromkeys(r for h in res.hits for r in h.chunk.refs))[:10]
            r10[name][cat != 5].append(len(g & set(ranked)) / len(g))
            split[name][part][cat != 5].append(r10[name][cat != 5][-1])
    searcher.config, searcher.floor = retrieval, default_floor
    base_p95 = pct(ms["default"], 0.95)
    for name, _, _ in configs:
        p95 = pct(ms[name], 0.95)
        print(
            f"{recall_line(f'variant {name}', r10[name])} search p50={pct(ms[name], 0.5):.1f} "
            f"ms p95={p95:.1f} ms = {p95 / max(base_p95, 1e-9):.2f}x default"
        )
        for part in sorted(split[name]):
            print(recall_line(f"  {part}", split[name][part]))
