"""MADial-Bench: do the memories a conversation talks around reach the model's prompt?

Usage::

    .venv/bin/python bench/madial.py [DATA_DIR] [--limit N] [--user N]

``DATA_DIR`` (default ``../shared/bench/madial-en``, kept outside the repository) holds the
benchmark's files (its README): 160 dialogues of two people, each person's memory bank, the
turn where a memory should come back and the memories that fit there, and the paper's
published top-20 lists. The edition is read from the file names: the English one
(``MADial-Bench-en-dialogue.json``, ``-memory.json``) or the Chinese original
(``MADial-Bench-zh-...``, with its published lists ``BGE_M3_dense_zh_top_20_ids.json`` and
``openai_zh_top_20_ids.json`` when they are beside it); the last line names it
(``madial-zh: ...``). A line is ``<Speaker>: "text"`` (a full-width colon and Chinese quotes
too); the assistant is whoever speaks at the test turn, the person everyone else.
``bench/data/madial-zh-tw`` is one person of the English edition translated into Traditional
Chinese for PCAI (its README): ``bench/madial.py bench/data/madial-zh-tw`` against
``bench/madial.py --user 1`` compares PCAI's Chinese with its English on the same content.

- **Through the whole bot**: one data dir and one conversation per person, as ``pcai chat``
  would hold it. The person's memories are confirmed first (each on its own day); then each
  dialogue starts with ``/new`` (:meth:`agent.pipeline.Agent.new_session`) and the person's
  lines up to the test turn are said through :meth:`agent.pipeline.Agent.respond` (the
  adaptive check, the conversation-formed search, selection, the budget, the prompt), with
  the background worker settled after each turn and an in-process model that just answers.
  Scored at the test turn: the share of the relevant memories in the prompt the model got
  (as ``bench/prompt_recall.py`` looks for them), and how many memories the turn injected
  (its ``/why`` record), averaged over every turn of the run.
- **Search alone**: ``pcai search`` on the same memories, before any chat, with the whole
  dialogue history before the test turn as the query (as the paper queries): R@5 and R@10,
  beside the paper's published lists scored the same way.

``PCAI_*`` settings in the environment apply (how a variant is measured). ``--limit N``
runs the first N dialogues only (a quick look; the figures are the whole set's only without
it). Last line:
``madial-en: prompt <p> (<n> injected a turn) search R@5 <s> (bge-m3 0.553, openai 0.695)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from prompt_recall import RecordingLLM, share  # noqa: E402

from agent.build import agent_worker  # noqa: E402
from agent.types import IncomingMessage  # noqa: E402
from bot.app import build_agent, build_embedder, build_services  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from memory.index.embedders import Embedder  # noqa: E402
from memory.index.sources import KIND_MEMORY  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "madial-en"
PUBLISHED = {
    "en": {
        "bge-m3": "bge_m3_top_20.json",
        "gte": "gte_top_20.json",
        "jina": "jina_top_20.json",
        "openai": "openai_top_20_bottom.json",
    },
    "zh": {"bge-m3": "BGE_M3_dense_zh_top_20_ids.json", "openai": "openai_zh_top_20_ids.json"},
}
EDITIONS = ("en", "zh")
_QUOTES = "\"'“”「」『』 "


@dataclass(frozen=True, slots=True)
class Dialogue:
    """One dialogue: the person, their lines before the test turn, history, relevant ids."""

    user: int
    lines: tuple[str, ...]  # the person's lines before the test turn, in order
    history: str  # every line before the test turn (the paper's query)
    relevant: tuple[str, ...]


@dataclass
class Tally:
    """Shares in the prompt, injections a turn, search recall at 5 and 10."""

    prompt: list[float] = field(default_factory=list)
    injected: list[int] = field(default_factory=list)
    r5: list[float] = field(default_factory=list)
    r10: list[float] = field(default_factory=list)


def settings_env() -> dict[str, str]:
    """The environment's ``PCAI_*`` settings (a variant measured: ``PCAI_BUDGET_L2_MAX=6``)."""
    return {k: v for k, v in os.environ.items() if k.startswith("PCAI_") and k != "PCAI_DATA_DIR"}


def mean(values: list[float] | list[int]) -> float:
    """The mean (0 when empty)."""
    return sum(values) / len(values) if values else 0.0


def utterance(line: str) -> tuple[str, str]:
    """``<Bart>: "text"`` (or ``<巴特>：「text」``) as (speaker, text); ("", "") for a mark like
    ``<BOD>``. Read by position, not a pattern: one look for ``>``, then the colon."""
    line = line.strip()
    close = line.find(">") if line.startswith("<") else -1
    rest = line[close + 1 :].lstrip() if close > 1 else ""
    if not rest or rest[0] not in ":：":
        return "", ""
    return line[1:close], rest[1:].strip(_QUOTES)


def edition(data: Path) -> str:
    """Which edition ``data`` holds ("en" or "zh"; "" for neither), by its file names."""
    return next((e for e in EDITIONS if (data / f"MADial-Bench-{e}-dialogue.json").is_file()), "")


def json_rows(path: Path) -> list[Any]:
    """A file of one JSON value a line, or one JSON list."""
    text = path.read_text(encoding="utf-8")
    try:
        values = [json.loads(raw) for raw in text.splitlines() if raw.strip()]
    except json.JSONDecodeError:
        values = [json.loads(text)]
    return [row for v in values for row in (v if isinstance(v, list) else [v])]


def load(data: Path) -> tuple[list[Dialogue], dict[str, dict[str, Any]]]:
    """The dialogues and the memory bank (id -> time, event, user-id)."""
    lang = edition(data) or "en"
    bank: dict[str, dict[str, Any]] = {}
    for row in json_rows(data / f"MADial-Bench-{lang}-memory.json"):
        bank.update(row)
    dialogues = []
    for row in json_rows(data / f"MADial-Bench-{lang}-dialogue.json"):
        test = int(row["test-turn"][0])
        assistant = utterance(row["dialogue"][test])[0] or "Assistant"
        said = [utterance(line) for line in row["dialogue"][:test]]
        mine = tuple(text for who, text in said if who and who != assistant and text)
        history = "\n".join(f"{who}: {text}" for who, text in said if who)
        relevant = tuple(str(i) for i in row["relevant-id"])
        dialogues.append(Dialogue(int(row["user-id"]), mine, history, relevant))
    return dialogues, bank


def talk_day(bank: dict[str, dict[str, Any]]) -> datetime:
    """The day the dialogues are held: the day after the bank's latest memory, 9:00.

    Recency counts a memory dated after "now" as said today (full boost), so the
    conversations must come after every memory (22 of the 160 are dated in 2024, the latest
    2024-10-23; a fixed 2024-03-01 boosted those fully).
    """
    latest = max(datetime.fromisoformat(str(mem["time"])) for mem in bank.values())
    return (latest + timedelta(days=1)).replace(hour=9, minute=0).astimezone()


def recall(found: list[str], relevant: tuple[str, ...], k: int) -> float:
    """The share of ``relevant`` among the first ``k`` of ``found``."""
    return len(set(found[:k]) & set(relevant)) / len(relevant)


def published(data: Path, keep: list[int]) -> dict[str, tuple[float, float]]:
    """The paper's lists, scored as recall at 5 and 10 over the same dialogues (``keep``:
    their places in the dialogue file)."""
    out = {}
    for name, file in PUBLISHED[edition(data) or "en"].items():
        path = data / file
        if not path.is_file():
            continue
        rows = [r for r in json_rows(path) if isinstance(r, dict)]
        r5, r10 = [], []
        for row in (rows[i] for i in keep if i < len(rows)):
            top = [str(i) for i in row.get("top-20-ids") or row.get("top_20_ids") or []]
            rel = tuple(str(i) for i in row.get("relevant-id") or row.get("relevant_id") or [])
            r5.append(recall(top, rel, 5))
            r10.append(recall(top, rel, 10))
        out[name] = (mean(r5), mean(r10))
    return out


async def run_person(
    embedder: Embedder,
    work: Path,
    user: int,
    dialogues: list[Dialogue],
    bank: dict[str, dict[str, Any]],
    tally: Tally,
    day: datetime,
) -> None:
    """One person's data dir: memories confirmed, search alone, then every dialogue chatted."""
    key = f"madial_{user}"
    settings = load_settings({**settings_env(), "PCAI_DATA_DIR": str(work / key)})
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    texts: dict[str, str] = {}
    by_text: dict[str, str] = {}
    for mid, mem in bank.items():
        if int(mem.get("user-id", 0)) != user:
            continue
        when = datetime.fromisoformat(str(mem["time"])).replace(hour=20).astimezone()
        entry = services.memory.remember(key, str(mem["event"]), now=when)
        texts[mid], by_text[entry.text] = str(mem["event"]), mid
    for d in dialogues:  # search alone, on the memories only (as the paper's lists)
        hits = services.memory.search(key, d.history, 10, now=day)
        found = [by_text.get(h.chunk.text, "") for h in hits if h.chunk.kind == KIND_MEMORY]
        tally.r5.append(recall(found, d.relevant, 5))
        tally.r10.append(recall(found, d.relevant, 10))
    llm = RecordingLLM()
    agent = build_agent(services, llm=llm)
    worker = agent_worker(agent)
    await worker.start()
    clock = day
    try:
        for n, d in enumerate(dialogues, start=1):
            clock += timedelta(days=1)  # one conversation a day, as they come
            await agent.new_session(key, now=clock)
            assert await worker.settle(600)
            prompt = ""
            for line in d.lines:
                clock += timedelta(minutes=1)
                llm.prompts.clear()
                reply = await agent.respond(IncomingMessage(user_key=key, text=line, time=clock))
                prompt = llm.prompts[0] if llm.prompts else ""
                tally.injected.append(len(reply.injected))
                assert await worker.settle(600)
            gold = [texts[i] for i in d.relevant if i in texts]
            tally.prompt.append(share(gold, prompt) if gold else 0.0)
            if n % 20 == 0:
                print(
                    f"  person {user}: {n} dialogues, prompt {mean(tally.prompt):.3f}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        await worker.stop()
        services.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, nargs="?", default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=0, help="the first N dialogues only")
    ap.add_argument("--user", type=int, default=0, help="one person's dialogues only (1 or 2)")
    args = ap.parse_args()
    lang = edition(args.data)
    if not lang:
        ap.error(f"MADial-Bench (English or Chinese) not found in {args.data}; pass its folder")
    every, bank = load(args.data)
    keep = [i for i, d in enumerate(every) if not args.user or d.user == args.user]
    keep = keep[: args.limit] if args.limit else keep
    dialogues = [every[i] for i in keep]
    work = Path(tempfile.mkdtemp(prefix="pcai-madial-"))
    embedder = build_embedder(load_settings({**settings_env(), "PCAI_DATA_DIR": str(work / "e")}))
    started = time.perf_counter()
    day = talk_day(bank)
    tally = Tally()
    for user in sorted({d.user for d in dialogues}):
        mine = [d for d in dialogues if d.user == user]
        asyncio.run(run_person(embedder, work, user, mine, bank, tally, day))
    lists = published(args.data, keep)
    for name, (r5, r10) in lists.items():
        print(f"published {name}: R@5 {r5:.3f} R@10 {r10:.3f}")
    refs = ", ".join(f"{n} {lists[n][0]:.3f}" for n in ("bge-m3", "openai") if n in lists)
    print(
        f"pcai search (whole history as the query): R@5 {mean(tally.r5):.3f} "
        f"R@10 {mean(tally.r10):.3f}"
    )
    print(
        f"through the bot: {len(tally.prompt)} dialogues, {len(tally.injected)} turns, "
        f"prompt {mean(tally.prompt):.3f} ({time.perf_counter() - started:.0f} s)"
    )
    print(
        f"madial-{lang}: prompt {mean(tally.prompt):.3f} ({mean(tally.injected):.1f} injected a"
        f" turn) search R@5 {mean(tally.r5):.3f} ({refs or 'no published lists beside it'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
