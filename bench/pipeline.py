"""Pre-LLM overhead of ``Agent.respond`` with 10,000 memories for one user.

Usage::

    .venv/bin/python bench/pipeline.py [--memories 10000] [--messages 200] [--rebuild]

Builds a data dir with one user whose MEMORY.md holds ``--memories`` entries (Chinese and
English, several sections, a few core and project-scoped ones), indexed with the real
embedded e5 model, then sends ``--messages`` messages (questions that trigger search, a few
greetings that do not) through the real pipeline with an in-process LLM that answers
instantly. The overhead of one message is the wall time of ``respond`` (session load and
save included) minus its "9 llm" step; the query embedding is included. Embedding 10,000
passages takes minutes, so the indexed data dir is kept in ``bench/.cache/`` keyed by the
parameters and reused; ``--rebuild`` makes a fresh one.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import memory  # noqa: E402
from agent.llm import ChatMessage, LLMResponse  # noqa: E402
from agent.types import IncomingMessage  # noqa: E402
from bot.app import build_agent, build_services  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from memory.fsutil import atomic_write_text  # noqa: E402
from memory.markdown import Entry, MemoryDocument, render_memory  # noqa: E402

USER = "bench_pipeline"
SECTIONS = ("關於我", "重要決定", "待辦", "教訓", "偏好", "技術／記憶", "Work", "Travel")
ZH = (
    "我們決定{p}專案改用 {db}，因為{why}",
    "我喜歡{food}，每週大概吃{n}次",
    "{name}的生日是{m}月{d}日，記得提前買禮物",
    "待辦：{p}的部署要在第{n}週完成，負責人是{name}",
    "教訓：{p}上線前一定要先備份 {db} 的資料",
    "我住在{city}，通勤大約{n}十分鐘",
)
EN = (
    "Decided to use {db} for the {p} project because it is simpler to operate",
    "My manager {name} prefers short weekly reports on Fridays",
    "Trip to {city} planned for week {n}; book the hotel early",
    "Lesson: always pin {db} versions in {p} before upgrading",
    "I run {n} kilometres on Sunday mornings",
)
WORDS = {
    "p": ("pcai", "atlas", "hermes", "orion", "kappa", "lumen"),
    "db": ("PostgreSQL", "SQLite", "MySQL", "Redis", "DuckDB"),
    "why": ("比較好維護", "團隊比較熟", "效能夠用", "部署簡單"),
    "food": ("牛肉麵", "壽司", "咖哩飯", "小籠包", "拉麵"),
    "name": ("老蔡", "小王", "Alice", "Bob", "陳經理"),
    "city": ("台北", "台中", "高雄", "Tokyo", "Berlin"),
}
MESSAGES = (
    "我之前決定 pcai 專案用哪個資料庫？",
    "What did I decide about the database for atlas last time?",
    "老蔡的生日是什麼時候？",
    "你好",
    "我上次說過喜歡吃什麼嗎？",
    "hermes 的部署待辦還有哪些？",
    "Remind me what lesson I learned about upgrading DuckDB?",
    "我住在哪裡？通勤多久？",
    "ok",
    "之前關於 Tokyo 的旅行計畫是什麼？",
)


class InstantLLM:
    """An in-process LLM that answers at once (the bench measures everything else)."""

    model = "instant"

    async def chat(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]] = ()
    ) -> LLMResponse:
        """Answer immediately; a summary request gets a short summary of its last lines."""
        last = str(messages[-1].get("content", "")) if messages else ""
        if last.startswith("Conversation to summarise"):
            lines = [ln for ln in last.splitlines()[1:] if ln.strip()][-3:]
            return LLMResponse(content="\n".join(f"- {ln[:80]}" for ln in lines))
        return LLMResponse(content="好的，我知道了。")


def make_entries(count: int, seed: int = 7) -> list[Entry]:
    """``count`` synthetic memories with governance fields, reproducible."""
    rng = random.Random(seed)
    start = datetime(2025, 1, 1).astimezone()
    out = []
    for i in range(count):
        template = rng.choice(ZH if rng.random() < 0.6 else EN)
        values = {k: rng.choice(v) for k, v in WORDS.items()}
        text = (
            template.format(
                n=rng.randint(1, 9), m=rng.randint(1, 12), d=rng.randint(1, 28), **values
            )
            + f"（#{i}）"
        )
        created = start + timedelta(hours=i * 7 % 8000)
        out.append(
            Entry(
                id=f"m-bench-{i:05d}",
                text=text,
                section=rng.choice(SECTIONS),
                is_core=i % 700 == 0,
                user_weight=9 if i % 997 == 0 else rng.randint(3, 8),
                scope=f"project:{values['p']}" if i % 50 == 0 else "global",
                created_at=created.isoformat(timespec="seconds"),
            )
        )
    return out


def build_data(data_dir: Path, memories: int) -> None:
    """Write and index the synthetic MEMORY.md."""
    with memory.open(data_dir) as library:
        doc = MemoryDocument(entries=tuple(make_entries(memories)))
        atomic_write_text(library.service.paths(USER).memory_md, render_memory(doc))
        started = time.perf_counter()
        library.reindex(USER)
        print(
            f"indexed {memories} memories in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def run(data_dir: Path, messages: int, warmup: int) -> None:
    """Send the messages and print the figures."""
    settings = load_settings({"PCAI_DATA_DIR": str(data_dir)})
    services = build_services(settings)
    shutil.rmtree(settings.sessions_dir, ignore_errors=True)  # each run starts a new session
    try:
        services.memory.ensure_index()
        agent = build_agent(services, llm=InstantLLM())
        clock = datetime.now().astimezone()
        overheads: list[float] = []
        steps: dict[str, list[float]] = defaultdict(list)
        searched = 0
        run = int(time.time()) % 100_000  # runs differ, so earlier summaries never repeat
        for i in range(messages + warmup):
            clock += timedelta(seconds=30)
            # A varying detail keeps compaction summaries distinct (identical ones are skipped).
            text = MESSAGES[i % len(MESSAGES)]
            text = text if len(text) < 6 else f"{text} (#{run}-{i})"
            msg = IncomingMessage(USER, text, clock, message_id=str(i))
            started = time.perf_counter()
            reply = await agent.respond(msg)
            wall = (time.perf_counter() - started) * 1000
            timings = dict(reply.timings)
            if i < warmup:
                continue
            overheads.append(wall - timings.get("9 llm", 0.0))
            searched += any(m.layer == "L2" for m in reply.injected)
            for name, ms in reply.timings:
                steps[name].append(ms)
        print(f"memories: {services.store.count(USER)} chunks indexed for {USER}")
        print(
            f"messages: {len(overheads)} measured ({searched} with L2 search hits), "
            f"{warmup} warm-up"
        )
        for name, values in steps.items():
            p50, p95 = pct(values, 0.5), pct(values, 0.95)
            print(f"  step {name:<18} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
        print(f"pre-LLM mean: {statistics.fmean(overheads):.1f} ms")
        print(f"pre-LLM p50: {pct(overheads, 0.5):.1f} ms")
        print(f"pre-LLM p95: {pct(overheads, 0.95):.1f} ms")
    finally:
        services.close()


def main() -> None:
    """Parse arguments, build or reuse the data dir, run."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--messages", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--rebuild", action="store_true", help="build a fresh data dir")
    args = p.parse_args()
    data_dir = ROOT / "bench" / ".cache" / f"pipeline-{args.memories}"
    ready = data_dir / ".ready"
    if args.rebuild or not ready.exists():
        shutil.rmtree(data_dir, ignore_errors=True)
        build_data(data_dir, args.memories)
        ready.write_text("ok\n")
    asyncio.run(run(data_dir, args.messages, args.warmup))


if __name__ == "__main__":
    main()
