"""LoCoMo recall@10 and search p95 of two source trees on one built data dir, interleaved.

Usage::

    .venv/bin/python bench/locomo_ab.py --cache-dir DIR --old TREE [--passes 2]

``DIR`` is a data dir ``bench/locomo.py --cache-dir DIR`` built (or one whose build was
stopped: ``--convs N`` takes its first N conversations, writing their meta and idle summaries
as the build would have); ``TREE`` another checkout of
PCAI (e.g. ``git archive main | tar -x -C TREE``). One worker process per tree (this one's
code and the old one's) loads the dir and embeds the questions; the parent then hands both
the same batches of questions in alternating order, so a machine that gets busier or quieter
slows both alike (a change of search code cannot be timed in one process). Recall@10 as
``bench/locomo.py`` counts it (all questions with evidence). Last line:
``locomo recall@10 new=<x> old=<y>; search p95 new/old: <ratio>x (p50 <ratio>x)``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCH = 50


def worker(cache_dir: Path, data: Path) -> None:
    """Serve batches: read question indexes on stdin, answer timings and recalls."""
    sys.path.insert(0, str(Path(os.environ["PCAI_TREE"])))
    sys.path.insert(0, str(Path(os.environ["PCAI_TREE"]) / "bench"))
    from datetime import datetime

    from locomo import normalise_evidence, user_key

    import memory

    lib = memory.open(cache_dir, ensure_index=False)
    meta = json.loads((cache_dir / "done.json").read_text())
    asked = []
    for conv in json.loads(data.read_text(encoding="utf-8")):
        if user_key(conv) not in meta:
            continue
        key = user_key(conv)
        now = datetime.fromisoformat(meta[key]["last"]).astimezone()
        for qa in conv["qa"]:
            gold = normalise_evidence(qa.get("evidence", []), set(meta[key]["known"]))
            if gold:
                qvec = lib.embedder.embed_query(str(qa["question"]))
                asked.append((key, now, str(qa["question"]), qvec, set(gold)))
    print(json.dumps({"questions": len(asked)}), flush=True)
    for line in sys.stdin:
        ms, r10 = [], []
        for i in json.loads(line):
            key, now, question, qvec, gold = asked[i]
            res = lib.searcher.search_with_vector(key, question, qvec, 10, now=now)
            ms.append(res.search_ms)
            ranked = list(dict.fromkeys(r for h in res.hits for r in h.chunk.refs))[:10]
            r10.append(len(gold & set(ranked)) / len(gold))
        print(json.dumps({"ms": ms, "r10": r10}), flush=True)


def complete(cache_dir: Path, data: Path, convs: int) -> None:
    """Finish a dir whose build was stopped: the first ``convs`` conversations' meta (as
    ``bench/locomo.py``'s ingest computes it) and idle summaries; nothing else is read."""
    sys.path.insert(0, str(ROOT / "bench"))
    from datetime import datetime, timedelta

    from locomo import sessions, user_key, write_summaries

    import memory

    lib = memory.open(cache_dir, ensure_index=False)
    meta = {}
    for sample in json.loads(data.read_text(encoding="utf-8"))[:convs]:
        key, last, known = user_key(sample), datetime.min, set()
        for _, start, turns in sessions(sample["conversation"]):
            last = max(last, start + timedelta(seconds=20 * (len(turns) - 1)))
            known |= {str(t["dia_id"]) for t in turns}
        meta[key] = {"last": last.isoformat(), "known": sorted(known)}
        write_summaries(lib, key, sample)
    lib.close()
    (cache_dir / "done.json").write_text(json.dumps(meta))


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--old", type=Path, required=True, help="the other source tree")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared/bench/locomo10.json")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument(
        "--convs", type=int, default=10, help="a dir whose build was stopped: its complete ones"
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.cache_dir, args.data)
        return 0
    if not (args.cache_dir / "done.json").exists():
        complete(args.cache_dir, args.data, args.convs)
    procs = {}
    for name, tree in (("new", ROOT), ("old", args.old.resolve())):
        env = {**os.environ, "PCAI_TREE": str(tree), "PYTHONPATH": str(tree)}
        cmd = [sys.executable, __file__, "--worker", "--cache-dir", str(args.cache_dir)]
        cmd += ["--old", str(args.old), "--data", str(args.data)]
        procs[name] = subprocess.Popen(
            cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
    counts = {name: json.loads(p.stdout.readline())["questions"] for name, p in procs.items()}
    assert counts["new"] == counts["old"], counts
    n = counts["new"]
    ms: dict[str, list[float]] = {name: [] for name in procs}
    r10: dict[str, list[float]] = {name: [] for name in procs}
    for rep in range(args.passes):
        for b, start in enumerate(range(0, n, BATCH)):
            batch = list(range(start, min(n, start + BATCH)))
            order = ["new", "old"] if (b + rep) % 2 == 0 else ["old", "new"]
            for name in order:
                p = procs[name]
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write(json.dumps(batch) + "\n")
                p.stdin.flush()
                got = json.loads(p.stdout.readline())
                ms[name] += got["ms"]
                r10[name] += got["r10"] if rep == 0 else []
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.close()
        p.wait()
    for name in procs:
        print(
            f"{name}: searches={len(ms[name])} p50={pct(ms[name], 0.5):.2f} ms "
            f"p95={pct(ms[name], 0.95):.2f} ms recall@10={sum(r10[name]) / n:.3f}"
        )
    p95 = pct(ms["new"], 0.95) / pct(ms["old"], 0.95)
    p50 = pct(ms["new"], 0.5) / pct(ms["old"], 0.5)
    print(
        f"locomo recall@10 new={sum(r10['new']) / n:.3f} old={sum(r10['old']) / n:.3f}; "
        f"search p95 new/old: {p95:.2f}x (p50 {p50:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
