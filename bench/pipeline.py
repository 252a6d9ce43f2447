"""Pre-LLM overhead of ``Agent.respond`` with 10,000 memories for one user.

Usage::

    .venv/bin/python bench/pipeline.py [--memories 10000] [--messages 200] [--rebuild]

Builds a data dir with one user whose MEMORY.md holds ``--memories`` entries (Chinese and
English, several sections, a few core and project-scoped ones), indexed with the real
embedded e5 model, then sends ``--messages`` messages (questions that trigger search, a few
greetings that do not) through the real pipeline with an in-process LLM that answers
instantly.

The agent times each step of a turn (:attr:`agent.types.Reply.timings`, in order). Pre-LLM is
the sum of the steps recorded before the model call ("9 llm"): what the user waits for
before the model starts (the query embedding is included). After-answer is the steps after it
plus what ``respond`` spends outside any step (saving the session on the way out), reported
apart; the old figure (the whole turn minus the model call) is printed too. The query
embedding is timed inside the same turns by a wrapper around the embedder, so the ratio on
the last line compares figures of the same run: ``pre-LLM p95: <ms> ms = <ratio>x
query-embedding p95``. Embedding 10,000 passages takes minutes, so the indexed data dir is
kept in ``bench/.cache/`` keyed by the parameters and reused; ``--rebuild`` makes a fresh one.
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
from agent.build import agent_worker  # noqa: E402
from agent.llm import ChatMessage, LLMResponse, TextSink  # noqa: E402
from agent.prefetch import WrappedEmbedder  # noqa: E402
from agent.types import IncomingMessage  # noqa: E402
from bot.app import build_agent, build_embedder, build_services  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from memory.base.fsutil import atomic_write_text  # noqa: E402
from memory.base.markdown import Entry, MemoryDocument, render_memory  # noqa: E402
from memory.index.embedders import Embedder, Vector  # noqa: E402
from memory.index.t2s import to_simplified  # noqa: E402

LLM_STEP = "9 llm"

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
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        on_text: TextSink | None = None,
    ) -> LLMResponse:
        """Answer immediately; a summary request gets a short summary of its last lines."""
        last = str(messages[-1].get("content", "")) if messages else ""
        if last.startswith("Conversation to summarise"):
            lines = [ln for ln in last.splitlines()[1:] if ln.strip()][-3:]
            return LLMResponse(content="\n".join(f"- {ln[:80]}" for ln in lines))
        return LLMResponse(content="好的，我知道了。")


class TimedEmbedder(WrappedEmbedder):
    """The bot's embedder, with each query embedding timed (nothing else changes)."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.query_ms: list[float] = []
        self.passages = 0

    def embed_query(self, text: str) -> Vector:
        """Embed and time one query."""
        started = time.perf_counter()
        try:
            return self.inner.embed_query(text)
        finally:
            self.query_ms.append((time.perf_counter() - started) * 1000)

    def embed_passages(self, texts: Sequence[str]) -> Any:
        """Embed passages (untimed: indexing), counted."""
        self.passages += len(texts)
        return self.inner.embed_passages(texts)


def split_timings(timings: Sequence[tuple[str, float]], wall: float) -> tuple[float, float]:
    """(pre-LLM ms, after-answer ms) of one turn from its ordered step timings."""
    names = [name for name, _ in timings]
    cut = names.index(LLM_STEP) if LLM_STEP in names else len(names)
    before = sum(ms for _, ms in timings[:cut])
    after = sum(ms for _, ms in timings[cut + 1 :])
    # Time outside every step (the session saved on the way out) is after the answer too.
    return before, after + max(0.0, wall - sum(ms for _, ms in timings))


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


async def run(
    data_dir: Path, messages: int, warmup: int, back_to_back: bool = False, turns: int = 3
) -> None:
    """Send the messages and print the figures."""
    env = {"PCAI_DATA_DIR": str(data_dir), "PCAI_CONVERSATION_TURNS": str(turns)}
    settings = load_settings(env)
    embedder = TimedEmbedder(build_embedder(settings))
    services = build_services(settings, embedder=embedder)
    shutil.rmtree(settings.sessions_dir, ignore_errors=True)  # each run starts a new session
    try:
        services.memory.ensure_index()
        # ... and with the memories alone: no log, summary or topic state of an earlier run.
        paths = services.memory.paths(USER)
        for path in (*paths.root.glob("memory/*.md"), paths.memory_full_md, paths.index_state):
            path.unlink(missing_ok=True)
        services.memory.indexer.sync_user(USER)
        agent = build_agent(services, llm=InstantLLM())
        worker = agent_worker(agent)  # the app runs it beside the turns: so does the bench
        await worker.start()
        assert await worker.settle(600)  # what earlier runs' logs left, before measuring
        clock = datetime.now().astimezone()
        overheads: list[float] = []
        pre_llm: list[float] = []
        folded: list[float] = []  # pre-LLM of turns whose line folds (Traditional Chinese)
        plain: list[float] = []
        after: list[float] = []
        steps: dict[str, list[float]] = defaultdict(list)
        background: list[float] = []  # ms from a reply until its deferred work was done
        searched = 0
        run = int(time.time()) % 100_000  # runs differ, so earlier summaries never repeat
        for i in range(messages + warmup):
            clock += timedelta(seconds=30)
            # A varying detail keeps compaction summaries distinct (identical ones are skipped).
            text = MESSAGES[i % len(MESSAGES)]
            text = text if len(text) < 6 else f"{text} (#{run}-{i})"
            msg = IncomingMessage(USER, text, clock, message_id=str(i))
            embedded = len(embedder.query_ms)
            started = time.perf_counter()
            reply = await agent.respond(msg)
            wall = (time.perf_counter() - started) * 1000
            timings = dict(reply.timings)
            if not back_to_back:
                # A person reads the answer first (and a real model takes seconds to write
                # it): the turn's background work is done before the next message comes.
                replied = time.perf_counter()
                assert await worker.settle(600)
                background.append((time.perf_counter() - replied) * 1000)
            if i < warmup:
                del embedder.query_ms[embedded:]  # warm-up embeddings are not measured
                continue
            overheads.append(wall - timings.get(LLM_STEP, 0.0))
            before, rest = split_timings(reply.timings, wall)
            pre_llm.append(before)
            (folded if to_simplified(text) != text else plain).append(before)
            after.append(rest)
            searched += any(m.layer == "L2" for m in reply.injected)
            for name, ms in reply.timings:
                steps[name].append(ms)
        last_reply = time.perf_counter()
        queued = agent.work.count(USER)
        assert await worker.settle(600)
        drained = (time.perf_counter() - last_reply) * 1000
        await worker.stop()
        print(f"memories: {services.store.count(USER)} chunks indexed for {USER}")
        print(
            f"deferred work: {queued} rows waiting at the last reply, done {drained:.0f} ms later"
        )
        if background:
            print(
                f"each reply's deferred work (index, topics, compaction) done after it: "
                f"p50 {pct(background, 0.5):.0f} ms, p95 {pct(background, 0.95):.0f} ms "
                f"(next message sent then)"
            )
        else:
            print("back to back: each message sent as soon as the previous reply came")
        print(
            f"messages: {len(overheads)} measured ({searched} with L2 search hits), "
            f"{warmup} warm-up"
        )
        for name, values in steps.items():
            p50, p95 = pct(values, 0.5), pct(values, 0.95)
            print(f"  step {name:<18} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
        embeds = embedder.query_ms
        figures = (
            ("whole turn minus the model (old 'pre-LLM')", overheads),
            ("after the answer (steps after 9 + session save)", after),
            (f"query embedding ({len(embeds)} in these turns)", embeds),
            ("pre-LLM (steps before 9 llm)", pre_llm),
            ("  of turns in Traditional Chinese", folded),
            ("  of the other turns", plain),
        )
        for name, values in figures:
            if not values:
                continue
            print(
                f"{name:<50} mean {statistics.fmean(values):6.1f}  p50 {pct(values, 0.5):6.1f}  "
                f"p95 {pct(values, 0.95):6.1f} ms"
            )
        p95, embed95 = pct(pre_llm, 0.95), pct(embeds, 0.95)
        print(f"pre-LLM p95: {p95:.1f} ms = {p95 / embed95:.2f}x query-embedding p95")
    finally:
        services.close()


def main() -> None:
    """Parse arguments, build or reuse the data dir, run."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--messages", type=int, default=200)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--rebuild", action="store_true", help="build a fresh data dir")
    p.add_argument(
        "--back-to-back",
        action="store_true",
        help="send each message as soon as the reply comes, while the background work of "
        "the previous turns still runs (default: after it, as a person would)",
    )
    p.add_argument(
        "--conversation-turns",
        type=int,
        default=3,
        help="PCAI_CONVERSATION_TURNS (0: search with the latest line alone)",
    )
    args = p.parse_args()
    data_dir = ROOT / "bench" / ".cache" / f"pipeline-{args.memories}"
    ready = data_dir / ".ready"
    if args.rebuild or not ready.exists():
        shutil.rmtree(data_dir, ignore_errors=True)
        build_data(data_dir, args.memories)
        ready.write_text("ok\n")
    asyncio.run(
        run(data_dir, args.messages, args.warmup, args.back_to_back, args.conversation_turns)
    )


if __name__ == "__main__":
    main()
