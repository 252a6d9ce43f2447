"""The prompt layouts against the real llama.cpp server: prompt tokens it processes per turn.

Usage::

    .venv/bin/python bench/prompt_server.py [--turns 30] [--context 8192]

``bench/prompt_cache.py``'s conversation goes through the real agent with both layouts (the
recording model answers; see there), and every recorded request, the compaction summaries
included, is then sent in order to the real ``llama-server`` of ``tests/realmodel`` (SmolLM2
135M, one slot, ``cache_prompt`` on) through the bot's OpenAI-compatible client, asking for
one token: the server's own ``prompt_tokens`` less its ``cached_tokens`` is what it
processed. The new layout's requests go first, then the old layout's on a restarted server
(an empty cache for each). Turn 1 is left out.

Last line: ``real server: <n> prompt tokens processed per turn = <r>x the old layout``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.openai_client import OpenAIChat
from prompt_cache import Request, replay
from tests.realmodel.server import LlamaServer

from memory.index.embedders import E5Embedder


async def processed(server: LlamaServer, requests: Sequence[Request]) -> dict[int, int]:
    """Tokens the server processed per turn for ``requests`` sent in order."""
    llm = OpenAIChat(server.base_url, "smollm2", reply_tokens=1)
    out: dict[int, int] = {}
    try:
        for r in requests:
            resp = await llm.chat(r.messages, r.tools)
            usage = resp.usage
            assert usage is not None, "the server did not report its counts"
            fresh = usage.prompt_tokens - (usage.cached_tokens or 0)
            out[r.turn] = out.get(r.turn, 0) + fresh
    finally:
        await llm.aclose()
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
                figures[name] = await processed(server, recorded)
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


def main() -> None:
    """Parse the options and run."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--context", type=int, default=8192)
    args = ap.parse_args()
    asyncio.run(run(args.turns, args.context))


if __name__ == "__main__":
    main()
