"""Write-path soak: 1,000 proposals/confirmations across 20 users in one process.

Usage::

    .venv/bin/python bench/write_soak.py [--users 20] [--per-user 50] [--workers 8]
        [--index-each] [--reject-every 7] [--edit-every 5]

Every proposal goes through the real write path (noise filter, sensitive-data guard,
duplicate and conflict check with the real E5 embedder and sqlite-vec, pending store in
pcai.db) from a pool of threads that interleaves users; each is then confirmed, edited and
confirmed, or rejected. By default confirmations leave indexing to the change detector and
each user's MEMORY.md is indexed in one batch at the end; ``--index-each`` indexes on every
confirm instead. Afterwards the script checks that every confirmed memory is in its owner's
MEMORY.md exactly once, in nobody else's, that rejected ones are nowhere, and that the index
holds exactly the entries of each file; it prints the figures and exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import memory
from memory import Memory
from memory.base.markdown import render_entry

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=timezone(timedelta(hours=8)))
FACTS = [
    "喜歡吃芒果",
    "prefers window seats on long flights",
    "週四晚上固定打羽毛球",
    "uses vim and tmux at work",
    "養了一隻叫豆豆的柴犬",
    "專案 Apollo 下個月上線",
    "allergic to peanuts",
    "咖啡只喝黑咖啡不加糖",
]


@dataclass(frozen=True, slots=True)
class Task:
    user: str
    text: str
    action: str  # "confirm" | "edit" | "reject"


@dataclass(frozen=True, slots=True)
class Outcome:
    task: Task
    text: str  # "" when rejected
    propose_ms: float
    confirm_ms: float


def make_tasks(users: list[str], per_user: int, reject_every: int, edit_every: int) -> list[Task]:
    """Distinct texts per user; some rejected, some edited; users interleaved."""
    tasks = []
    n = 0
    for u, user in enumerate(users):
        for i in range(per_user):
            n += 1
            action = "confirm"
            if reject_every and n % reject_every == 0:
                action = "reject"
            elif edit_every and n % edit_every == 0:
                action = "edit"
            fact = FACTS[(u * 7 + i) % len(FACTS)]
            tasks.append(Task(user, f"第{u}位使用者的備忘 {i} (note {u}-{i})：{fact}", action))
    random.Random(7).shuffle(tasks)
    return tasks


def run_task(library: Memory, task: Task, index_each: bool) -> Outcome:
    """Propose, then confirm / edit+confirm / reject, timing both halves."""
    svc, acts = library.confirm, library.user_acts  # the operator answers for the users
    t0 = time.perf_counter()
    p = svc.propose(task.user, task.text, "soak", now=T0)
    t1 = time.perf_counter()
    text = ""
    if task.action == "reject":
        svc.reject(acts.act(task.user, p.id, "reject", via="operator"), now=T0)
    else:
        text = task.text
        if task.action == "edit":
            text = task.text + "（已修改 edited）"
            svc.edit(acts.act(task.user, p.id, "edit", via="operator", text=text), now=T0)
        act = acts.act(task.user, p.id, "confirm", via="operator")
        svc.confirm(act, now=T0 + timedelta(minutes=1), index=index_each)
    t2 = time.perf_counter()
    return Outcome(task, text, (t1 - t0) * 1000, (t2 - t1) * 1000)


def verify(library: Memory, users: list[str], outcomes: list[Outcome]) -> list[str]:
    """Every mismatch between what was confirmed and what the files and index hold."""
    kept: dict[str, list[str]] = {u: [] for u in users}
    rejected: dict[str, list[str]] = {u: [] for u in users}
    for o in outcomes:
        (kept if o.text else rejected)[o.task.user].append(o.text or o.task.text)
    raws = {u: library.service.paths(u).memory_md.read_text(encoding="utf-8") for u in users}
    problems = []
    for user in users:
        entries = library.entries(user)
        if Counter(e.text for e in entries) != Counter(kept[user]):
            problems.append(f"{user}: entries differ from what was confirmed")
        problems += [
            f"{user}: {e.id} appears {raws[user].count(render_entry(e))} times"
            for e in entries
            if raws[user].count(render_entry(e)) != 1
        ]
        problems += [f"{user}: rejected text present" for t in rejected[user] if t in raws[user]]
        for other in users:
            if other != user:
                leaked = [t for t in kept[other] if t in raws[user]]
                problems += [f"{user}: holds {len(leaked)} memories of {other}"] if leaked else []
        indexed = set(library.store.indexed_units(user, "MEMORY.md"))
        if indexed != {e.id for e in entries}:
            problems.append(f"{user}: index holds {len(indexed)} units, file {len(entries)}")
        if library.pending.pending(user):
            problems.append(f"{user}: proposals left pending")
    return problems


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    """Run the soak and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--per-user", type=int, default=50)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--index-each", action="store_true")
    ap.add_argument("--reject-every", type=int, default=7)
    ap.add_argument("--edit-every", type=int, default=5)
    args = ap.parse_args()

    users = [f"bench_soak{i:02d}" for i in range(args.users)]
    tasks = make_tasks(users, args.per_user, args.reject_every, args.edit_every)
    with tempfile.TemporaryDirectory(prefix="pcai-soak-") as tmp:
        library = memory.open(Path(tmp) / "data")
        try:
            library.embedder.embed_query("warm up")
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.workers) as pool:
                outcomes = list(pool.map(lambda t: run_task(library, t, args.index_each), tasks))
            write_s = time.perf_counter() - start
            start = time.perf_counter()
            for user in users:
                library.service.index_memory(user)
            index_s = time.perf_counter() - start
            problems = verify(library, users, outcomes)
        finally:
            library.close()

    confirmed = sum(1 for o in outcomes if o.text)
    propose_ms = [o.propose_ms for o in outcomes]
    confirm_ms = [o.confirm_ms for o in outcomes]
    print(f"proposals: {len(outcomes)} across {len(users)} users, {args.workers} threads")
    print(f"confirmed: {confirmed}  rejected: {len(outcomes) - confirmed}")
    print(f"write phase: {write_s:.1f} s ({len(outcomes) / write_s:.1f} proposals/s)")
    print(
        f"propose ms: median {statistics.median(propose_ms):.0f}, p95 {_pct(propose_ms, 0.95):.0f}"
    )
    print(
        f"answer ms:  median {statistics.median(confirm_ms):.0f}, p95 {_pct(confirm_ms, 0.95):.0f}"
    )
    print(
        f"final index: {index_s:.1f} s (batch, {'per confirm' if args.index_each else 'deferred'})"
    )
    print("integrity: " + ("OK, nothing lost, nothing mixed" if not problems else "FAILED"))
    for p in problems[:20]:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
