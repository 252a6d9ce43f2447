"""Prompt tokens per turn and what turn 200 still remembers: naive, window-only, compaction.

Usage::

    .venv/bin/python bench/compaction.py [--turns 200] [--verbose]

Replays a deterministic conversation (Chinese and English) through the real agent
(``bot.app.build_services`` + ``build_agent``, real e5 embedder, real SQLite) with an
in-process model that answers each message with a scripted reply; compaction summaries come
from the extractive summariser (the model's summary requests are not sent). After each turn
the app's deferred-work worker does what the turn left for later (the compaction the turn
planned, indexing its log lines), as it does while the user reads the answer, and the
daily-log index job runs as the bot's minute job does (turns are 3 minutes apart).

* Early turns (1-48, every other one) state 24 unique facts (a booking code, a date, an IP,
  a name ...); the rest is project and travel talk with decisions, todos and numbers, and
  small talk; replies are about three times as long as the questions.
* Two agents hear the same conversation: the bot as configured (the 15-message window
  + compaction, threshold 10,000 tokens / 15 turns, keep 5 turns), and the same bot
  with compaction switched off (the window alone). Both search memory the way the agent does.
* Tokens per turn are counted on the messages each agent really sends to the model (system,
  memory block, history, message; ``MESSAGE_OVERHEAD_TOKENS`` per message, like the
  compactor). A naive bot's prompt is the system text + the whole conversation + the message.
* At turn ``--turns`` each fact is asked about once, each question on a copy of the data dir
  as it stood after the previous turn (so one question never changes what the next sees). A
  fact counts as retained when its answer is in the prompt the agent built, and the channel is
  reported: the window, the compaction note, or a memory-search hit (daily log or
  MEMORY_FULL.md summary).

The last line is ``retention at turn 200: <pct>% of early facts, prompt <n> tokens =
<ratio>x window-only`` (the compacting bot's retention; its mean prompt over the turn-200
questions against the window-only bot's mean over the same questions).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import random
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.build import agent_worker
from agent.deferred import DeferredWorker
from agent.llm import ChatMessage, LLMResponse
from agent.pipeline import Agent
from agent.prompt import MEMORY_OPEN, system_prompt, turn_message
from agent.types import IncomingMessage, Reply
from bot.app import Services, build_agent, build_services
from bot.settings import load_settings
from history.compaction import MESSAGE_OVERHEAD_TOKENS, NOTE_PREFIX
from history.config import HistoryConfig
from memory.base.tokens import TokenCounter, load_counter
from memory.index.embedders import E5Embedder, Embedder

USER = "bench_compaction"
TOPICS = [
    ("Fallback Bot 修復", ["pgrep 誤匹配", "curl API", "gateway", "systemd unit"]),
    ("京都旅行 Kyoto trip", ["祇園 hotel", "JR pass", "預算 50000 元", "嵐山"]),
    ("home NAS backup", ["RAID 1", "rsync nightly", "外接硬碟 4TB", "Backblaze B2"]),
    ("Python 重構 refactor", ["asyncio", "pytest", "type hints", "ruff"]),
    ("健身計畫 fitness", ["深蹲 squat", "每週三次", "蛋白質 120g", "跑步 5km"]),
]
SMALL_TALK = ["早安！", "哈哈好好笑", "今天天氣好熱", "吃飽了嗎？", "good morning", "thanks!"]
# (statement in an early turn, question at the last turn, the answer that must be in the prompt)
FACTS: list[Fact] = [
    ("記一下：我姐姐的生日是 7 月 23 日，她喜歡桔梗花。", "我姐姐的生日是哪一天？", "7 月 23 日"),
    ("家裡路由器的管理埠改成 8443 了，之前是 80。", "家裡路由器的管理埠現在是多少？", "8443"),
    ("京都的飯店訂在祇園，訂位代號 KY-4821。", "京都飯店的訂位代號是什麼？", "KY-4821"),
    ("牙醫約在 3 月 14 日下午兩點，在中山區的陳牙醫。", "牙醫約在哪一天？", "3 月 14 日"),
    ("車子上次保養時里程是 45210 公里。", "車子上次保養時的里程是多少？", "45210"),
    ("媽媽的血壓藥叫 Norvasc，每天早上一顆。", "媽媽吃的血壓藥叫什麼？", "Norvasc"),
    ("我們社區的管理費每個月 2350 元。", "社區管理費每個月多少錢？", "2350"),
    ("我家小狗叫做麻糬，今年四歲。", "我家小狗叫什麼名字？", "麻糬"),
    ("公司新專案的代號是 Bluefin，負責人是林經理。", "公司新專案的代號是什麼？", "Bluefin"),
    ("備份硬碟放在書房書桌的第二個抽屜。", "備份硬碟放在哪裡？", "第二個抽屜"),
    ("我對花生過敏，點餐的時候要提醒我。", "我對什麼食物過敏？", "花生"),
    ("爸爸的新手機是 Pixel 8，他常問我怎麼設定。", "爸爸的新手機是什麼型號？", "Pixel 8"),
    ("Note: my passport expires on 2027-09-30.", "When does my passport expire?", "2027-09-30"),
    (
        "The NAS has the static IP 192.168.1.37 now.",
        "What is the NAS's IP address?",
        "192.168.1.37",
    ),
    ("My landlord is Mr. Okafor, he lives upstairs.", "What is my landlord's name?", "Okafor"),
    (
        "The book club meets at Riverside Library on Thursdays.",
        "Where does the book club meet?",
        "Riverside Library",
    ),
    ("The plumber quoted 380 euros to fix the boiler.", "How much did the plumber quote?", "380"),
    ("Our new router is an Archer AX55.", "Which router model do we have?", "AX55"),
    ("My flight to Lisbon is TP1357 on May 3.", "What is my flight number to Lisbon?", "TP1357"),
    ("School pickup for the kids is at 15:40.", "What time is the kids' school pickup?", "15:40"),
    ("I left the spare key with my neighbour Priya.", "Who has my spare key?", "Priya"),
    ("My gym locker is number 112.", "What is my gym locker number?", "112"),
    ("For the record, my blood type is O negative.", "What is my blood type?", "O negative"),
    (
        "The dentist's clinic is Brightsmile on Baker Street.",
        "What is the name of my dentist's clinic?",
        "Brightsmile",
    ),
]
Fact = tuple[str, str, str]
ACK = ("好的，我記下了。", "Got it, noted.")


def filler(rng: random.Random, i: int) -> tuple[str, str]:
    """One turn of topic talk (decisions, todos, numbers) or small talk, with its reply."""
    name, facts = TOPICS[(i // 20) % len(TOPICS)]
    if rng.random() < 0.15:
        return rng.choice(SMALL_TALK), "哈哈，是啊！Anything else about the plan?"
    fact = rng.choice(facts)
    kind = rng.choice(["question", "decision", "todo", "detail"])
    n = rng.randint(2, 90)
    if kind == "decision":
        user = f"關於{name}，我們決定採用 {fact}，因為上次試了 {n} 次都比較穩定。"
    elif kind == "todo":
        user = f"TODO for {name}: check {fact} before {n} March, 下一步是把結果寫進文件。"
    elif kind == "question":
        user = f"{name} 的 {fact} 要怎麼設定比較好？Can you compare the options for me?"
    else:
        user = f"補充一下 {name}：{fact} 目前用了 {n}%，I think we can keep it for now."
    reply = (
        f"好的，關於 {name} 的 {fact}：建議先確認目前的設定，再逐步調整。"
        f"First, keep a note of the current value ({n}). Second, test one change at a time "
        f"and compare the results over a few days. 如果 {fact} 的結果穩定，就把它記成決定；"
        f"否則列為待辦，下週再看。Want me to remember this as a decision or a todo?"
    )
    return user, reply


def conversation(turns: int, seed: int = 7) -> list[tuple[str, str]]:
    """``turns - 1`` (message, reply) pairs: the facts on odd turns 1-47, talk around them."""
    rng = random.Random(seed)
    out = []
    for i in range(turns - 1):
        if i % 2 == 0 and i // 2 < len(FACTS):
            text = FACTS[i // 2][0]
            out.append((text, ACK[1] if text.isascii() else ACK[0]))
        else:
            out.append(filler(rng, i))
    return out


class ScriptedLLM:
    """An in-process model: answers with the scripted reply and keeps each prompt it saw."""

    model = "scripted"

    def __init__(self) -> None:
        self.reply = ""
        self.prompts: list[list[dict[str, Any]]] = []

    async def chat(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]] = (), **_: Any
    ) -> LLMResponse:
        """The scripted reply; the prompt is recorded."""
        self.prompts.append([dict(m) for m in messages])
        return LLMResponse(content=self.reply)


def prompt_tokens(counter: TokenCounter, messages: Sequence[Mapping[str, Any]]) -> int:
    """Tokens of a chat prompt, counted the way the compactor counts history."""
    return sum(
        counter.count(str(m.get("content", ""))) + MESSAGE_OVERHEAD_TOKENS for m in messages
    )


@dataclass(slots=True)
class Bot:
    """One agent over its own data dir."""

    name: str
    data_dir: Path
    history: HistoryConfig
    embedder: Embedder
    services: Services | None = None
    llm: ScriptedLLM | None = None
    agent: Agent | None = None
    worker: DeferredWorker | None = None

    def open(self) -> None:
        """Build the services and the agent (compaction summaries: extractive)."""
        settings = load_settings({"PCAI_DATA_DIR": str(self.data_dir)})
        settings = dataclasses.replace(settings, history=self.history)
        self.services = build_services(settings, embedder=self.embedder)
        self.services.memory.ensure_index()
        self.llm = ScriptedLLM()
        self.agent = build_agent(self.services, llm=self.llm)
        self.services.summaries.primary = None  # the extractive summariser, no model call
        # The app's worker does what a turn leaves for later (the compaction, log indexing).
        self.worker = agent_worker(self.agent)

    def close(self) -> None:
        """Close the services."""
        if self.services is not None:
            self.services.close()
            self.services = None

    async def turn(
        self, msg: IncomingMessage, reply: str, *, index: bool = True
    ) -> tuple[Reply, list[dict[str, Any]]]:
        """One message through the agent, then (``index``) its deferred work and the index job.

        The deferred work (the compaction the turn planned, indexing its log lines) is done
        before the next message, as the app's worker does while the user reads the answer.
        """
        assert self.llm is not None and self.services is not None and self.agent is not None
        assert self.worker is not None
        self.llm.reply = reply
        self.llm.prompts.clear()
        answer = await self.agent.respond(msg)
        if index:
            assert await self.worker.settle(600), "the deferred work did not finish"
            await asyncio.to_thread(self.services.memory.indexer.sync_daily_logs, [USER])
        return answer, self.llm.prompts[-1] if self.llm.prompts else []


PARTS = ("system", "memory", "note", "history", "message")


def parts(counter: TokenCounter, prompt: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """A prompt's tokens by part: system text, memory block, compaction note, history, message."""
    out = dict.fromkeys(PARTS, 0)
    for i, m in enumerate(prompt):
        content = str(m.get("content", ""))
        if i == 0:
            part = "system"
        elif i == len(prompt) - 1:  # the user's turn: the message and this turn's memories
            said = prompt_tokens(counter, [{"content": turn_message(content)}])
            out["message"], out["memory"] = said, prompt_tokens(counter, [m]) - said
            continue
        elif content.startswith(MEMORY_OPEN):
            part = "memory"
        elif content.startswith(NOTE_PREFIX):
            part = "note"
        else:
            part = "history"
        out[part] += prompt_tokens(counter, [m])
    return out


def naive_parts(counter: TokenCounter, now: datetime, history: int, text: str) -> dict[str, int]:
    """A naive bot's prompt: its system text, the whole conversation so far, the message."""
    system = system_prompt(now)
    out = dict.fromkeys(PARTS, 0)
    out["system"] = prompt_tokens(counter, [{"content": system}])
    out["history"] = history
    out["message"] = prompt_tokens(counter, [{"content": text}])
    return out


def row(name: str, prompts: Sequence[dict[str, int]]) -> str:
    """Mean tokens of each part and of the whole prompt, and the largest prompt."""
    totals = [sum(p.values()) for p in prompts]
    cols = "".join(f"{statistics.fmean(p[k] for p in prompts):8.0f}" for k in PARTS)
    return f"  {name:<12}{statistics.fmean(totals):8.0f}{cols}{max(totals):8d}"


def channels(answer: str, reply: Reply, prompt: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where in the prompt ``answer`` appears (empty: the fact was not retained)."""
    found = []
    for m in prompt[1:-1]:  # not the system text, not the question itself
        content = str(m.get("content", ""))
        if answer not in content:
            continue
        if content.startswith(NOTE_PREFIX):
            found.append("compaction note")
        elif m.get("role") != "system":
            found.append("window")
    for item in reply.injected:
        if answer in item.text:
            kind = "summary" if "MEMORY_FULL" in item.source else "daily log"
            found.append(f"search: {kind}")
    return sorted(set(found))


async def probe(
    bot: Bot, when: datetime, work: Path, counter: TokenCounter, facts: Sequence[Fact]
) -> tuple[list[list[str]], list[dict[str, int]]]:
    """Ask every fact's question on a fresh copy of the bot's data dir; (channels, prompts)."""
    found: list[list[str]] = []
    tokens: list[dict[str, int]] = []
    for n, (_, question, answer) in enumerate(facts):
        copy = work / f"{bot.name}-probe"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(bot.data_dir, copy)
        clone = Bot(bot.name, copy, bot.history, bot.embedder)
        clone.open()
        try:
            msg = IncomingMessage(USER, question, when, message_id=f"probe{n}")
            reply, prompt = await clone.turn(msg, "…", index=False)
        finally:
            clone.close()
        found.append(channels(answer, reply, prompt))
        tokens.append(parts(counter, prompt))
    return found, tokens


async def run(turns: int, verbose: bool) -> None:
    """Replay, probe and print."""
    counter = load_counter()
    embedder = E5Embedder()
    base = load_settings({}).history
    off = dataclasses.replace(
        base, auto_write_threshold_tokens=10**9, auto_write_threshold_turns=10**9
    )
    t0 = datetime(2026, 2, 9, 9, 0, tzinfo=UTC)
    with tempfile.TemporaryDirectory(prefix="pcai-bench-compaction-") as tmp:
        work = Path(tmp)
        bots = [Bot("compaction", work / "compaction", base, embedder)]
        bots.append(Bot("window-only", work / "window", off, embedder))
        for bot in bots:
            bot.open()
        per_turn: dict[str, list[dict[str, int]]] = {"naive": []}
        history = 0
        convo = conversation(turns)
        for i, (user, reply) in enumerate(convo, start=1):
            now = t0 + timedelta(minutes=3 * i)
            msg = IncomingMessage(USER, user, now, message_id=str(i))
            for bot in bots:
                _, prompt = await bot.turn(msg, reply)
                per_turn.setdefault(bot.name, []).append(parts(counter, prompt))
            per_turn["naive"].append(naive_parts(counter, now, history, user))
            history += prompt_tokens(counter, [{"content": user}, {"content": reply}])
            if verbose:
                line = "  ".join(f"{k} {sum(v[-1].values()):>6}" for k, v in per_turn.items())
                print(f"turn {i:>3}: {line}")
        full = bots[0].data_dir / "users" / USER / "MEMORY_FULL.md"
        summaries = full.read_text("utf-8") if full.exists() else ""
        for bot in bots:
            bot.close()
        when = t0 + timedelta(minutes=3 * turns)
        said = {u for u, _ in convo}
        facts = [f for f in FACTS if f[0] in said]  # all of them unless --turns is small
        probes = {bot.name: await probe(bot, when, work, counter, facts) for bot in bots}
    naive_kept = sum(any(answer in u for u in said) for _, _, answer in facts)
    header = f"  {'':<12}{'total':>8}" + "".join(f"{k:>8}" for k in PARTS) + f"{'max':>8}"
    print(f"counter: {counter.name}; {turns - 1} turns replayed, {len(facts)} early facts")
    print(f"compaction summaries in MEMORY_FULL.md: {summaries.count('## 對話摘要')}")
    print(f"prompt tokens per turn, turns 1-{turns - 1} (mean by part, largest prompt):")
    print(header)
    for name in ("naive", "window-only", "compaction"):
        print(row(name, per_turn[name]))
    print(f"prompt at turn {turns}, one question per early fact (mean by part, largest):")
    print(header)
    print(row("naive", [naive_parts(counter, when, history, q) for _, q, _ in facts]))
    for name in ("window-only", "compaction"):
        print(row(name, probes[name][1]))
    print(f"retention at turn {turns} (the answer is in the prompt):")
    print(f"  {'naive':<12} {100 * naive_kept / len(facts):5.1f}% (the whole conversation)")
    for name in ("window-only", "compaction"):
        found = probes[name][0]
        kept = sum(bool(f) for f in found)
        via = Counter(c for f in found for c in f)
        ways = ", ".join(f"{k} {v}" for k, v in sorted(via.items())) or "nothing"
        # What the history alone (window and compaction note) still holds, without search.
        alone = sum(any(not c.startswith("search") for c in f) for f in found)
        print(
            f"  {name:<12} {100 * kept / len(facts):5.1f}% ({kept}/{len(facts)}; "
            f"found through: {ways}; without memory search {alone}/{len(facts)})"
        )
        if verbose:
            for (_, question, answer), f in zip(facts, found, strict=True):
                print(f"    {'kept' if f else 'LOST'} {answer!r:<22} {question}  {f}")
    found, prompts = probes["compaction"]
    pct = 100 * sum(bool(f) for f in found) / len(facts)
    mean = statistics.fmean(sum(p.values()) for p in prompts)
    window = statistics.fmean(sum(p.values()) for p in probes["window-only"][1])
    print(
        f"retention at turn {turns}: {pct:.0f}% of early facts, prompt {mean:.0f} tokens = "
        f"{mean / window:.2f}x window-only"
    )


def main() -> None:
    """Parse the arguments and run the replay."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--verbose", action="store_true", help="every turn and every fact")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    asyncio.run(run(args.turns, args.verbose))


if __name__ == "__main__":
    main()
