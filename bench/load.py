"""Load: many users chatting at once through the Telegram stand-in with an instant fake LLM.

Starts the project's Telegram Bot API stand-in (tests/fakes/telegram_server.py, in its own
process) and a fake Ollama on free ports, runs the real bot process (`pcai run`, the embedded
e5 model, its deferred-work worker), and plays users whose messages are questions that search
memory. A reply that never comes is lost; a reply carrying another user's token is crossed.

Closed loop (always): USERS users each send MESSAGES messages, each waiting for its reply
before the next. Printed: throughput and message-to-reply latency, then what one message
costs: the bot process's CPU time (``/proc/<pid>/stat``: user + system, every thread) from
the first message until every reply came and its deferred work (indexing, compaction, topic
index) was done, divided by the messages. That cost implies a capacity for the machine's
cores; the measured throughput (over the same span) is printed as a share of it. The line
before says what the harness (players, fake Ollama, Telegram stand-in) and every other
process used of those cores over the same span (``/proc/stat``: the machine is shared) and
the share of what they left to the bot.

Open loop (``--open-loop``): a single user's message-to-reply p50 first (one message at a
time), then Poisson arrivals at half the measured capacity, spread over the users at random,
and the p95 of those as a multiple of that p50.

    .venv/bin/python bench/load.py [--users 50] [--messages 20] [--open-loop]

Last line: ``capacity: <cpu ms> CPU ms/msg, <n> msg/s possible, measured <n> msg/s = <pct>%``,
or with ``--open-loop``: ``open loop: <n> msg/s offered, p95 <ms> ms = <ratio>x single-user
p50, lost <n>, crossed <n>``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.chatload import BASE, Replies, percentile, stand_in, wait_drained
from tests.e2e.harness import User


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU time every process on the machine has spent so far (``/proc/stat``, all cores):
    user, nice, system, irq, softirq and steal, not idle or iowait."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


def closed_loop(
    replies: Replies, players: list[User], first: int, messages: int, timeout: float
) -> list[str]:
    """Each player sends ``messages`` messages, each after the reply to the previous one."""
    tokens: list[str] = []
    guard = threading.Lock()

    def play(index: int, user: User) -> None:
        for n in range(first, first + messages):
            token = replies.ask(user, index, n, timeout)
            with guard:
                tokens.append(token)

    threads = [threading.Thread(target=play, args=(i, u)) for i, u in enumerate(players)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tokens


def open_loop(
    replies: Replies, players: list[User], rate: float, total: int, first: int, timeout: float
) -> tuple[list[str], float]:
    """``total`` messages at Poisson arrivals of ``rate``/s, each from a random player.

    Returns the tokens and the offered rate achieved (messages / time spent sending).
    """
    rng = random.Random(15)
    counters = [first] * len(players)
    tokens: list[str] = []
    started = time.perf_counter()
    due = started
    for _ in range(total):
        due += rng.expovariate(rate)
        pause = due - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        index = rng.randrange(len(players))
        tokens.append(replies.send(players[index], index, counters[index]))
        counters[index] += 1
    offered = total / (time.perf_counter() - started)
    deadline = time.perf_counter() + timeout
    while len(replies.ms(tokens)) < len(tokens) and time.perf_counter() < deadline:
        time.sleep(0.05)
    return tokens, offered


def measured(
    what: str, replies: Replies, tokens: list[str], wait: Callable[[], float], started: float
) -> tuple[list[float], float, float]:
    """Print a phase's latency figures; returns (latencies ms, seconds to the last reply,
    seconds until the deferred work was done too)."""
    last = max(
        (replies.sent[t] + replies.latency[t] for t in tokens if t in replies.latency),
        default=started,
    )
    done = wait()
    ms = replies.ms(tokens)
    lost = len(tokens) - len(ms)
    if ms:
        print(
            f"{what}: {len(tokens)} messages, latency ms p50 {statistics.median(ms):.0f}  "
            f"p95 {percentile(ms, 95):.0f}  max {max(ms):.0f}; lost {lost}"
        )
    return ms, last - started, done - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--open-loop", action="store_true", help="also the open-loop test")
    parser.add_argument("--single", type=int, default=40, help="messages for the single-user p50")
    parser.add_argument(
        "--open-messages", type=int, default=0, help="open-loop messages (default users*messages)"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, stand_in(Path(tmp) / "botmemory", args.users) as on:
        replies, emulator, pid, db = on.replies, on.emulator, on.pid, on.db
        players = [User(emulator, BASE + i, f"User{i}") for i in range(args.users)]
        # Warm-up: the e5 model loads on the first query.
        closed_loop(replies, players[:1], 0, 3, args.timeout)
        wait_drained(db)

        harness = [os.getpid(), *([emulator.proc.pid] if emulator.proc else [])]
        rest0 = [cpu_seconds(p) for p in harness]
        busy0 = machine_busy_seconds()
        cpu0, started = cpu_seconds(pid), time.perf_counter()
        tokens = closed_loop(replies, players, 100, args.messages, args.timeout)
        ms, to_last, to_done = measured(
            "closed loop", replies, tokens, lambda: wait_drained(db), started
        )
        bot_s = cpu_seconds(pid) - cpu0
        cpu_ms = bot_s * 1000 / len(tokens)
        rest_s = [cpu_seconds(p) - c for p, c in zip(harness, rest0, strict=True)]
        # What other processes (not the bot, not this harness) ran over the same span.
        others_s = max(0.0, machine_busy_seconds() - busy0 - bot_s - sum(rest_s))
        rest = [r * 1000 / len(tokens) for r in rest_s]
        print(
            "harness CPU ms/msg (same span, same cores): players + fake Ollama "
            + " + ".join(f"{r:.1f}" for r in rest)
            + " (Telegram stand-in)"
        )
        lost = len(tokens) - len(ms)
        p95 = percentile(ms, 95) if ms else float("nan")
        print(
            f"load: {len(ms) / to_last:.1f} msg/s, p95 {p95:.0f} ms, "
            f"lost {lost + replies.crossed} ({args.users} users x {args.messages} messages, "
            f"closed loop, to the last reply)"
        )
        done_rate = len(ms) / to_done
        print(
            f"deferred work done {1000 * (to_done - to_last):.0f} ms after the last reply; "
            f"{cores()} cores"
        )
        possible = cores() * 1000 / cpu_ms
        # The machine is shared: the cores the harness and other processes left to the
        # bot over the same span, for reading a loaded run (on a saturated machine the
        # others take whatever the bot leaves idle, so this share reads high by itself).
        left = max(0.0, cores() - (sum(rest_s) + others_s) / to_done)
        print(
            f"cores used over the span: harness {sum(rest_s) / to_done:.2f}, other processes "
            f"{others_s / to_done:.2f}, left to the bot {left:.2f}: "
            f"{left * 1000 / cpu_ms:.1f} msg/s possible on them, measured = "
            f"{100 * done_rate * cpu_ms / 1000 / max(left, 1e-9):.0f}%"
        )
        capacity = (
            f"capacity: {cpu_ms:.1f} CPU ms/msg, {possible:.1f} msg/s possible, "
            f"measured {done_rate:.1f} msg/s = {100 * done_rate / possible:.0f}%"
        )
        failed = lost + replies.crossed
        if not args.open_loop:
            print(capacity)
            return 0 if failed == 0 else 1
        print(capacity)

        single = closed_loop(replies, players[:1], 1000, args.single, args.timeout)
        single_ms, _, _ = measured(
            "single user", replies, single, lambda: wait_drained(db), time.perf_counter()
        )
        p50 = statistics.median(single_ms)
        crossed_before = replies.crossed
        total = args.open_messages or args.users * args.messages
        rate = possible / 2
        opened, offered = open_loop(replies, players, rate, total, 2000, args.timeout)
        open_ms, _, _ = measured(
            f"open loop at {rate:.1f} msg/s",
            replies,
            opened,
            lambda: wait_drained(db),
            time.perf_counter(),
        )
        open_lost = len(opened) - len(open_ms)
        crossed = replies.crossed - crossed_before
        open95 = percentile(open_ms, 95) if open_ms else float("nan")
        print(
            f"open loop: {offered:.1f} msg/s offered, p95 {open95:.0f} ms = "
            f"{open95 / p50:.2f}x single-user p50, lost {open_lost}, crossed {crossed}"
        )
        return 0 if failed + open_lost + crossed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
