"""The prompt layouts against the real llama.cpp server: prompt tokens it processes per turn.

Usage::

    .venv/bin/python bench/prompt_server.py [--turns 30] [--context 8192]

``bench/prompt_cache.py``'s conversation goes through the real agent with both layouts (the
recording model answers; see there), and every recorded request, the compaction summaries
included, is then sent in order to the real ``llama-server`` of ``tests/realmodel`` (SmolLM2
135M, one slot, its prompt cache on) on its OpenAI-compatible route, asking for one token:
the server's own ``timings.prompt_n`` (prompt tokens it processed, the cached ones left out)
is the figure. The new layout's requests go first, then the old layout's on a restarted server
(an empty cache for each). Turn 1 is left out.

``--first-text N``: instead, the real bot process (``tests/realmodel/bot.py``: the OpenAI
backend against that server, replies of at most 96 tokens) and the Telegram stand-in; a user
sends N messages one after the other in a private chat, and for each the stand-in's clock
gives the time to the first draft with text and to the final message (a reply too short for
a draft counts its final message as its first text).

Last line: ``real server: <n> prompt tokens processed per turn = <r>x the old layout``, or
with ``--first-text``: ``first text: <ms> ms = <r> of the whole reply`` (medians).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from prompt_cache import Request, replay

from memory.index.embedders import E5Embedder
from tests.realmodel.server import LlamaServer


def processed(server: LlamaServer, requests: Sequence[Request]) -> dict[int, int]:
    """Tokens the server processed per turn for ``requests`` sent in order (its ``timings``)."""
    out: dict[int, int] = {}
    for r in requests:
        body = {"model": "smollm2", "messages": r.messages, "max_tokens": 1, "stream": False}
        if r.tools:
            body["tools"] = r.tools
        req = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=600) as resp:
            answer = json.load(resp)
        out[r.turn] = out.get(r.turn, 0) + int(answer["timings"]["prompt_n"])
    return out


async def run(turns: int, context: int) -> None:
    """Record both layouts, replay each on a fresh server, print the figures."""
    embedder = E5Embedder()
    with tempfile.TemporaryDirectory(prefix="pcai-bench-server-") as tmp:
        work = Path(tmp)
        new_llm, _ = await replay("new", work / "new", embedder, turns)
        old_llm, _ = await replay("old", work / "old", embedder, turns)
        figures: dict[str, dict[int, int]] = {}
        for name, recorded in (("new", new_llm.requests), ("old", old_llm.requests)):
            server = LlamaServer(context=context)
            server.start(work / f"llama-{name}.log")
            try:
                figures[name] = await asyncio.to_thread(processed, server, recorded)
            finally:
                server.stop()
    counted = range(2, turns + 1)
    new = statistics.fmean(figures["new"][t] for t in counted)
    old = statistics.fmean(figures["old"][t] for t in counted)
    print(f"turns {turns} (turn 1 left out), server context {context}, one slot")
    for name in ("new", "old"):
        mean = statistics.fmean(figures[name][t] for t in counted)
        print(f"  {name}: {mean:.0f} a turn (max {max(figures[name][t] for t in counted)})")
    ratio = new / old
    print(f"real server: {new:.0f} prompt tokens processed per turn = {ratio:.2f}x the old layout")


LINES = [
    "Hello! What should I cook tonight? Something quick, please.",
    "我想整理一下這週的行程，週三要開會，週五晚上要去看電影。",
    "Can you suggest a name for my new cat? She is grey and very calm.",
    "明天早上要記得帶雨傘，天氣預報說會下雨。",
    "What is a good way to start running if I have never done it before?",
]


def first_text(messages: int, context: int) -> None:
    """Time to the first draft and to the final message, through the real bot process."""
    from tests.e2e.harness import Emulator, User
    from tests.realmodel.bot import RealBot

    firsts: list[float] = []
    ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="pcai-bench-first-") as tmp:
        work = Path(tmp)
        server, emulator = LlamaServer(context=context), Emulator()
        server.start(work / "llama.log")
        bot = RealBot(emulator, server, work / "botmemory", work / "bot.log", "1001")
        try:
            bot.start()
            alice = User(emulator, 1001, "Alice")
            for i in range(messages):
                seen = len(emulator.call("getBotCalls", {})["result"])
                sent_at = time.time() * 1000
                before = len(alice.inbox)
                alice.send(LINES[i % len(LINES)])
                alice.wait_for(lambda m, n=before: alice.inbox.index(m) >= n, timeout=300)
                calls = emulator.call("getBotCalls", {})["result"][seen:]
                drafts = [
                    c
                    for c in calls
                    if c["method"].lower() == "sendmessagedraft" and c["params"].get("text")
                ]
                final = [c for c in calls if c["method"].lower() == "sendmessage"]
                if not final:
                    print(f"  message {i + 1}: no reply")
                    continue
                whole = final[0]["time"] - sent_at
                # No draft with text (a short reply): the first text is the final message.
                first = drafts[0]["time"] - sent_at if drafts else whole
                firsts.append(first)
                ratios.append(first / whole)
                shown = f"{len(drafts)} drafts" if drafts else "no draft (short reply)"
                print(
                    f"  message {i + 1}: first text {first:.0f} ms, whole {whole:.0f} ms, {shown}"
                )
        finally:
            bot.stop()
            server.stop()
            emulator.stop()
    first, share = statistics.median(firsts), statistics.median(ratios)
    print(f"first text: {first:.0f} ms = {share:.2f} of the whole reply (medians)")


def main() -> None:
    """Parse the options and run."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--first-text", type=int, default=0, help="messages through the bot")
    args = ap.parse_args()
    if args.first_text:
        first_text(args.first_text, args.context)
        return
    asyncio.run(run(args.turns, args.context))


if __name__ == "__main__":
    main()
