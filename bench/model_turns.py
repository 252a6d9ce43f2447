"""Real model turns: a 30-turn conversation through the real bot against a real model server.

Starts llama.cpp's ``llama-server`` with SmolLM2-135M (tests/realmodel: built once into
``~/.cache/pcai`` by ``tests/realmodel/build_server.py``; nothing is downloaded here), the
Telegram stand-in, and the real bot process (``pcai run``) over the OpenAI-compatible backend.
One user sends TURNS messages, each after the previous reply. Per turn, from the bot's own log
line of each model call, the server's counts: prompt tokens processed (not from its cache) and
cached, and the time from sending the request to the first streamed piece. A turn's figures
sum its calls (a compaction summary the worker asks for in the background counts in the turn
it overlaps); its first token is its first call's.

    .venv/bin/python bench/model_turns.py [--turns 30] [--ctx 8192]

Last line: ``real model: <n> prompt tokens processed per turn, <m> cached, first token p50
<ms> ms`` (the means over the turns, the median first token).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.harness import Emulator, User
from tests.realmodel.bot import RealBot
from tests.realmodel.server import LlamaServer

LINES = [
    "Hi! I just moved to Taichung last month.",
    "I work as a nurse, mostly night shifts.",
    "What should I cook after a night shift?",
    "I don't eat pork, by the way.",
    "Any idea for a quick breakfast instead?",
    "My sister Mei visits next weekend.",
    "She likes hiking. Any trail near Taichung?",
    "我最喜歡的茶是凍頂烏龍。",
    "Can you suggest a tea shop?",
    "I have a cat called Mochi.",
    "Mochi hates the vacuum cleaner.",
    "How do I calm a scared cat?",
    "My shift changes to days in March.",
    "What helps with switching sleep schedules?",
    "I want to learn to swim this summer.",
    "Is it too late to learn at 34?",
    "明天要記得繳電話費。",
    "What did I say about my sister?",
    "I'm thinking of buying a scooter.",
    "Electric or petrol, what do you think?",
    "My budget is about 60,000 NT dollars.",
    "I also want to save for a trip to Japan.",
    "Kyoto or Osaka for a first visit?",
    "I'd go in November.",
    "What's the weather like then?",
    "Remind me what my cat is called?",
    "I started reading a novel by Murakami.",
    "It's Kafka on the Shore.",
    "Do you know other books like it?",
    "Thanks for chatting, good night!",
]


def main() -> None:
    """Run the conversation and print the per-turn figures and the last line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--ctx", type=int, default=8192, help="the server's context (-c)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one reply may take")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pcai-model-turns-") as tmp:
        work = Path(tmp)
        server = LlamaServer(context=args.ctx)
        server.start(work / "server.log")
        emulator = Emulator()
        bot = RealBot(emulator, server, work / "botmemory", work / "bot.log", "1001")
        try:
            bot.start()
            run_turns(bot, User(emulator, 1001, "Ann", language_code="en"), args)
        finally:
            bot.stop()
            emulator.stop()
            server.stop()


def wait_reply(user: User, seen: int, timeout: float) -> None:
    """Wait for a bot message after the first ``seen`` of the chat."""
    user.wait_for(lambda m: user.inbox.index(m) >= seen, timeout=timeout)


def run_turns(bot: RealBot, user: User, args: argparse.Namespace) -> None:
    """Send the turns; print one line per turn and the summary line."""
    processed, cached, first = [], [], []
    print(f"llama-server -c {args.ctx} -t 1, SmolLM2-135M; load {os.getloadavg()[0]:.1f}")
    for n in range(args.turns):
        seen_calls, seen_msgs = len(bot.calls()), len(user.inbox)
        user.send(LINES[n % len(LINES)])
        wait_reply(user, seen_msgs, args.timeout)
        calls = bot.wait_calls(seen_calls + 1, timeout=args.timeout)[seen_calls:]
        processed.append(sum(c.prompt - c.cached for c in calls))
        cached.append(sum(c.cached for c in calls))
        ms = calls[0].first_token_ms
        if ms is not None:
            first.append(ms)
        print(
            f"turn {n + 1:2d}: {len(calls)} call(s), prompt {processed[-1]} processed + "
            f"{cached[-1]} cached tokens, first token {ms if ms is not None else '?'} ms",
            flush=True,
        )
    print(f"load {os.getloadavg()[0]:.1f}")
    print(
        f"real model: {statistics.mean(processed):.0f} prompt tokens processed per turn, "
        f"{statistics.mean(cached):.0f} cached, first token p50 "
        f"{statistics.median(first) if first else float('nan'):.0f} ms"
    )


if __name__ == "__main__":
    main()
