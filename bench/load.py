"""Load: many users chatting at once through the Telegram stand-in with an instant fake LLM.

Starts the project's Telegram Bot API stand-in (tests/fakes/telegram_server.py, in its own
process) and a fake Ollama on free ports, runs the real bot process (`pcai run`),
and has USERS users each send MESSAGES messages (each waits for its reply before the next,
like a person). Prints throughput and message-to-reply latency; a reply that never comes is
lost, a reply carrying another user's token is crossed. Last line:
``load: <msgs/s> msg/s, p95 <ms> ms, lost <n>``.

    .venv/bin/python bench/load.py [--users 50] [--messages 20]
"""

from __future__ import annotations

import argparse
import queue
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.harness import BotProcess, Emulator, User, bot_env
from tests.fakes.ollama_server import FakeOllama

_TOKEN = re.compile(r"\[(u\d+-m\d+)\]")


def echo_model(request: dict[str, Any]) -> str:
    """Answer instantly with the token of the last user message."""
    for m in reversed(request.get("messages", [])):
        if m.get("role") == "user":
            found = _TOKEN.findall(str(m.get("content", "")))
            return f"收到 [{found[-1]}]" if found else "收到"
    return "收到"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class Replies:
    """One poller for every user: the bot's sendMessage calls, read from the stand-in's log.

    Polling the stand-in once per user would make the load generator, not the bot, the
    bottleneck on a 2-core machine; the call log gives every chat's replies in one request.
    """

    def __init__(self, emulator: Emulator) -> None:
        self.emu = emulator
        self.since = 0
        self.boxes: dict[int, queue.Queue[str]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def box(self, chat_id: int) -> queue.Queue[str]:
        """The queue of texts the bot sent to ``chat_id``."""
        return self.boxes.setdefault(chat_id, queue.Queue())

    def _run(self) -> None:
        while not self.stop.is_set():
            got = self.emu.call("getBotCalls", {"since": self.since, "method": "sendMessage"})
            for call in got.get("result", []) if isinstance(got, dict) else []:
                self.since = max(self.since, int(call["seq"]))
                params = call.get("params", {})
                self.box(int(params.get("chat_id", 0))).put(str(params.get("text", "")))
            time.sleep(0.01)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()

    latencies: list[float] = []
    lost = crossed = late = 0
    guard = threading.Lock()
    with tempfile.TemporaryDirectory() as tmp, FakeOllama() as ollama:
        ollama.chat_handler = echo_model
        emulator = Emulator(own_process=True)  # its HTTP work stays off the players' GIL
        base = 200_000
        allowed = ",".join(str(base + i) for i in range(args.users))
        bot = BotProcess(bot_env(emulator, ollama.url, Path(tmp) / "botmemory", allowed))
        replies = Replies(emulator)
        try:
            bot.start()
            for i in range(args.users):
                replies.box(base + i)
            replies.thread.start()

            def play(index: int) -> None:
                nonlocal lost, crossed, late
                user = User(emulator, base + index, f"User{index}")
                box = replies.box(base + index)
                for n in range(args.messages):
                    token = f"u{index}-m{n}"
                    sent = time.perf_counter()
                    user.send(f"第 {n} 則訊息，請幫我記下今天的進度 [{token}]")
                    deadline = sent + args.timeout
                    while True:
                        try:
                            text = box.get(timeout=max(0.0, deadline - time.perf_counter()))
                        except queue.Empty:
                            with guard:
                                lost += 1
                            break
                        got = _TOKEN.search(text)
                        if got is None:
                            continue  # a notice, not a reply
                        owner = got.group(1).split("-")[0]
                        with guard:
                            if got.group(1) == token:
                                latencies.append(time.perf_counter() - sent)
                                break
                            if owner == f"u{index}":
                                late += 1  # the reply to an earlier, timed-out message
                            else:
                                crossed += 1  # another user's reply: a privacy failure

            started = time.perf_counter()
            threads = [threading.Thread(target=play, args=(i,)) for i in range(args.users)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - started
        finally:
            replies.stop.set()
            bot.kill()
            emulator.stop()

    total = args.users * args.messages
    ms = [x * 1000 for x in latencies]
    print(f"users {args.users} x messages {args.messages} = {total} messages in {elapsed:.1f} s")
    if ms:
        print(
            f"latency ms: p50 {statistics.median(ms):.0f}  p95 {percentile(ms, 95):.0f}  "
            f"max {max(ms):.0f}"
        )
    print(f"replied {len(ms)}, lost {lost} (late replies seen {late}), crossed {crossed}")
    p95 = percentile(ms, 95) if ms else float("nan")
    print(f"load: {len(ms) / elapsed:.1f} msg/s, p95 {p95:.0f} ms, lost {lost + crossed}")
    return 0 if lost == 0 and crossed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
