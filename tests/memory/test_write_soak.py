"""Many users proposing and confirming at once lose nothing and mix nothing.

A scaled-down version of ``bench/write_soak.py`` (which runs the full 1,000 proposals across
20 users and prints timings): 20 users, threads interleaving them, real E5 and SQLite.
"""

from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from memory import Memory
from memory.base.markdown import render_entry

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=TPE)
USERS = [f"telegram_{7000 + i}" for i in range(20)]
PER_USER = 3
FACTS = [
    "喜歡吃芒果",
    "prefers window seats",
    "週四晚上打羽毛球",
    "uses vim and tmux",
    "養了一隻柴犬",
]


@dataclass(frozen=True, slots=True)
class Task:
    user: str
    text: str
    action: str  # "confirm" | "edit" | "reject"


def _tasks() -> list[Task]:
    tasks = []
    for u, user in enumerate(USERS):
        for i in range(PER_USER):
            action = ("confirm", "edit", "reject")[(u + i) % 3]
            text = f"使用者{u}的第{i}條備忘 note {u}-{i}: {FACTS[(u + i) % len(FACTS)]}"
            tasks.append(Task(user, text, action))
    random.Random(4).shuffle(tasks)  # interleave users across the worker threads
    return tasks


def _run(library: Memory, task: Task) -> tuple[Task, str]:
    svc, acts = library.confirm, library.user_acts
    p = svc.propose(task.user, task.text, "soak", now=T0)
    if task.action == "reject":
        svc.reject(acts.act(task.user, p.id, "reject", via="button"), now=T0)
        return task, ""
    text = task.text
    if task.action == "edit":
        text = task.text + "（已修改 edited）"
        svc.edit(acts.act(task.user, p.id, "edit", via="edit", text=text), now=T0)
    act = acts.act(task.user, p.id, "confirm", via="button")
    entry = svc.confirm(act, now=T0 + timedelta(minutes=1), index=False)
    assert entry.text == text
    return task, text


def test_concurrent_proposals_lose_nothing_and_mix_nothing(library: Memory) -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda t: _run(library, t), _tasks()))
    for user in USERS:
        library.service.index_memory(user)  # the change detector indexes the batch

    kept: dict[str, list[str]] = {u: [] for u in USERS}
    rejected: dict[str, list[str]] = {u: [] for u in USERS}
    for task, text in results:
        (kept if text else rejected)[task.user].append(text or task.text)

    for user in USERS:
        entries = library.service.entries(user)
        assert Counter(e.text for e in entries) == Counter(kept[user])
        raw = library.service.paths(user).memory_md.read_text(encoding="utf-8")
        for e in entries:
            assert raw.count(render_entry(e)) == 1
        for other in USERS:
            if other != user:
                for text in kept[other]:
                    assert text not in raw
        for text in rejected[user]:
            assert text not in raw
        assert set(library.store.indexed_units(user, "MEMORY.md")) == {e.id for e in entries}
        assert library.pending.pending(user) == []
