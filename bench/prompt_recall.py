"""Prompt recall: how much of a question's gold evidence reaches the model's prompt, through
the whole agent, in a conversation where the bot has been in use.

Usage::

    .venv/bin/python bench/prompt_recall.py [--data ../shared/bench/locomo10.json] [--convs 1]
        [--skip 0] [--questions N] [--no-locomo] [--no-zh]

``bench/locomo.py`` measures search alone on a store where nothing was ever used. A bot in use
differs: its access counts grow, its section window moves, its history window shows part of
the conversation (issue 24). Here every line goes through :meth:`agent.pipeline.Agent.respond`
(the adaptive check, section gating, the conversation-formed search, selection, the budget,
the prompt), with the app's background worker settled after each turn (it indexes the line
and records the section window), and an in-process model that just answers. At each question
turn the bench scores the share of the question's gold evidence that is in the prompt the
model got (anywhere in it: memory block or history), and, for reference, in the top
``l2_max`` (5) hits of a plain search for the question just before the turn.

- **LoCoMo** (the data ``bench/locomo.py`` reads, kept outside the repository): each session
  of a conversation is written to the daily log and indexed as the bot's log job does
  (``bench/locomo.py``'s ingest; ``--chat-sessions`` chats every turn through the agent
  instead, ``"Caroline: ..."`` as the user's line: ten seconds a turn on tonight's busy
  machine), then its questions with evidence are asked as turns, in order. Gold = the
  evidence turns' text. The first ``--convs`` (1) conversations after ``--skip`` (0) (a long
  run can be split) and the first ``--questions`` (100) questions of each only: a turn takes
  seconds on a busy machine.
- **zh**: the hand-written Chinese set of ``tests/agent/data/prompt_recall_zh.json`` (two
  people, sectioned memories, topics in stretches) and of ``tests/agent/data/dialogues_zh.json``
  (one person, ten short dialogues): memories confirmed first, then the conversation chatted;
  gold = the memories a question names. A tuning set, never the held-out one.

Evidence counts as in the prompt when its first 40 characters (case, spaces and punctuation
aside) are. Last line: ``prompt recall: locomo=<x> zh=<y> (search alone: locomo=<a> zh=<b>)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from locomo import (  # noqa: E402
    DEFAULT_DATA,
    ingest,
    normalise_evidence,
    sessions,
    turn_text,
    user_key,
)

from agent.build import agent_worker  # noqa: E402
from agent.llm import LLMResponse  # noqa: E402
from agent.types import IncomingMessage  # noqa: E402
from bot.app import Services, build_agent, build_embedder, build_services  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from memory.index.embedders import Embedder  # noqa: E402

ZH_SET = ROOT / "tests" / "agent" / "data" / "prompt_recall_zh.json"
ZH_DIALOGUES = ROOT / "tests" / "agent" / "data" / "dialogues_zh.json"
PREFIX = 40  # characters of a gold text that must be in the prompt
_NOT_WORD = re.compile(r"[\W_]+")


def fold_key(text: str) -> str:
    """``text`` without case, spaces and punctuation (how gold is looked for)."""
    return _NOT_WORD.sub("", text.lower())


class RecordingLLM:
    """An in-process model: answers at once and keeps the prompts it was sent."""

    model = "recording"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def chat(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] = (), **_: Any
    ) -> LLMResponse:
        """Keep the prompt; answer briefly (a summary request gets its last lines)."""
        self.prompts.append("\n".join(str(m.get("content", "")) for m in messages))
        last = str(messages[-1].get("content", "")) if messages else ""
        if "summar" in last[:200].lower() or "摘要" in last[:200]:
            lines = [ln for ln in last.splitlines()[1:] if ln.strip()][-3:]
            return LLMResponse(content="\n".join(f"- {ln[:80]}" for ln in lines))
        return LLMResponse(content="好的。")


@dataclass
class Tally:
    """Per-question shares of gold evidence: in the prompt, and in search alone."""

    prompt: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)

    @staticmethod
    def mean(values: list[float]) -> float:
        """The mean (0 with no questions)."""
        return sum(values) / len(values) if values else 0.0


def share(gold: Sequence[str], haystack: str) -> float:
    """The share of ``gold`` texts whose first characters are in ``haystack``."""
    hay = fold_key(haystack)
    return sum(fold_key(g)[:PREFIX] in hay for g in gold) / len(gold)


@dataclass
class Chat:
    """One data dir's services, agent, worker and model, and the clock of its turns."""

    services: Services
    llm: RecordingLLM
    clock: datetime
    tally: Tally
    agent: Any = None
    worker: Any = None

    async def start(self) -> None:
        """Build the agent and start its background worker, as the app does."""
        self.agent = build_agent(self.services, llm=self.llm)
        self.worker = agent_worker(self.agent)
        await self.worker.start()

    async def say(self, user: str, text: str, when: datetime | None = None) -> str:
        """One turn; returns the prompt the model got ("" if none)."""
        self.clock = when or self.clock + timedelta(minutes=1)
        self.llm.prompts.clear()
        await self.agent.respond(IncomingMessage(user_key=user, text=text, time=self.clock))
        prompt = self.llm.prompts[0] if self.llm.prompts else ""
        assert await self.worker.settle(600)
        return prompt

    async def ask(self, user: str, text: str, gold: Sequence[str]) -> None:
        """A question turn: search alone first, then the turn, each scored."""
        k = self.services.settings.budget.l2_max
        when = self.clock + timedelta(minutes=1)
        hits = self.services.memory.search(user, text, k, now=when)
        self.tally.search.append(share(gold, "\n".join(h.chunk.text for h in hits)))
        self.tally.prompt.append(share(gold, await self.say(user, text, when)))


def open_chat(data_dir: Path, embedder: Embedder, clock: datetime) -> Chat:
    """Services over ``data_dir`` with the shared embedder."""
    services = build_services(load_settings({"PCAI_DATA_DIR": str(data_dir)}), embedder=embedder)
    services.memory.ensure_index()
    return Chat(services, RecordingLLM(), clock, Tally())


async def run_zh(embedder: Embedder, work: Path) -> Tally:
    """The hand-written Chinese set."""
    start = datetime(2026, 11, 2, 9, 0).astimezone()
    chat = open_chat(work / "zh", embedder, start)
    await chat.start()
    try:
        people = json.loads(ZH_SET.read_text(encoding="utf-8"))["people"]
        for person in people:
            user, texts = person["user"], {}
            for key, (section, text) in person["memories"].items():
                chat.services.memory.remember(user, text, section=section, now=start)
                texts[key] = text
            for line in person["conversation"]:
                if isinstance(line, str):
                    await chat.say(user, line)
                else:
                    await chat.ask(user, line["text"], [texts[g] for g in line["gold"]])
        extra = json.loads(ZH_DIALOGUES.read_text(encoding="utf-8"))
        for text in extra["memories"]:
            chat.services.memory.remember("zh_dialogues", text, now=start)
        for dialogue in extra["dialogues"]:
            for line in dialogue["lines"]:
                await chat.say("zh_dialogues", line)
            gold = [extra["memories"][dialogue["relevant"]]]
            await chat.ask("zh_dialogues", dialogue["latest"], gold)
    finally:
        await chat.worker.stop()
        chat.services.close()
    return chat.tally


async def run_locomo(
    embedder: Embedder, work: Path, data: list[dict[str, Any]], questions: int, chatted: bool
) -> Tally:
    """LoCoMo conversations logged (or chatted) session by session, then questions asked."""
    chat = open_chat(work / "locomo", embedder, datetime(2023, 1, 1).astimezone())
    await chat.start()
    try:
        for sample in data:
            key, conv = user_key(sample), sample["conversation"]
            said = {str(t["dia_id"]): turn_text(t) for _, _, ts in sessions(conv) for t in ts}
            if not chatted:  # as the bot's daily-log job writes and indexes a day's lines
                last, _ = ingest(chat.services.library, key, conv)
                chat.clock = last.astimezone()
            for _, when, turns in sessions(conv) if chatted else ():
                when = when.astimezone()
                for i, turn in enumerate(turns):
                    text = f"{turn['speaker']}: {turn_text(turn)}"
                    await chat.say(key, text, when + timedelta(seconds=30 * i))
            asked, first = 0, len(chat.tally.prompt)
            for qa in sample["qa"]:
                gold = normalise_evidence(qa.get("evidence", []), set(said))
                if not gold or (questions and asked >= questions):
                    continue
                asked += 1
                await chat.ask(key, str(qa["question"]), [said[g] for g in gold])
                if asked % 20 == 0:
                    print(f"  {key}: {asked} questions", file=sys.stderr, flush=True)
            mine = Tally(chat.tally.prompt[first:], chat.tally.search[first:])
            print(
                f"  {key}: {len(said)} turns, {asked} questions, prompt "
                f"{Tally.mean(mine.prompt):.3f}, search alone {Tally.mean(mine.search):.3f}",
                file=sys.stderr,
            )
    finally:
        await chat.worker.stop()
        chat.services.close()
    return chat.tally


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--convs", type=int, default=1, help="LoCoMo conversations (file order)")
    ap.add_argument("--skip", type=int, default=0, help="skip the first N conversations")
    ap.add_argument("--questions", type=int, default=100, help="at most N per conversation")
    ap.add_argument(
        "--chat-sessions",
        action="store_true",
        help="chat every LoCoMo turn through the agent too (10 s a turn on a busy machine)",
    )
    ap.add_argument("--no-locomo", dest="locomo", action="store_false")
    ap.add_argument("--no-zh", dest="zh", action="store_false")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pcai-prompt-recall-"))
    embedder = build_embedder(load_settings({"PCAI_DATA_DIR": str(work / "e")}))
    started = time.perf_counter()
    zh = asyncio.run(run_zh(embedder, work)) if args.zh else Tally()
    print(
        f"zh: {len(zh.prompt)} questions, prompt {Tally.mean(zh.prompt):.3f}, "
        f"search alone {Tally.mean(zh.search):.3f} ({time.perf_counter() - started:.0f} s)"
    )
    lo = Tally()
    if args.locomo:
        if not args.data.is_file():
            ap.error(f"LoCoMo data not found at {args.data}; pass --data or --no-locomo")
        data = json.loads(args.data.read_text(encoding="utf-8"))[args.skip :][: args.convs]
        lo = asyncio.run(run_locomo(embedder, work, data, args.questions, args.chat_sessions))
        print(
            f"locomo ({args.convs} conversation(s) after {args.skip}, "
            f"at most {args.questions} questions each, "
            f"sessions {'chatted' if args.chat_sessions else 'logged'}): "
            f"{len(lo.prompt)} questions, "
            f"prompt {Tally.mean(lo.prompt):.3f}, search alone {Tally.mean(lo.search):.3f} "
            f"({time.perf_counter() - started:.0f} s)"
        )
    print(
        f"prompt recall: locomo={Tally.mean(lo.prompt):.3f} zh={Tally.mean(zh.prompt):.3f} "
        f"(search alone: locomo={Tally.mean(lo.search):.3f} zh={Tally.mean(zh.search):.3f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
