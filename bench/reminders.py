"""Reminders at scale: start-up rescheduling of 10,000 reminders and the firing delay p95.

Usage::

    .venv/bin/python bench/reminders.py [--reminders 10000] [--users 500] [--batch 1000]
        [--spread 5] [--send-latency 0.0] [--scheduler ptb|aps]

1. ``--reminders`` scheduled reminders across ``--users`` users (a fifth of them recurring,
   due over the next 30 days) are written to a fresh ``pcai.db``; the process "restarts": a
   new connection, store and service over the bot's scheduling path, PTB's JobQueue through
   :class:`bot.telegram.reminders.JobQueueAdapter` (``--scheduler ptb``, the default; one
   ``run_once`` per reminder, and ``start()`` in a worker thread as the bot runs it) or a bare
   APScheduler ``AsyncIOScheduler`` through
   :class:`agent.reminders.scheduler.APSchedulerAdapter` (``aps``, the terminal chat's), and
   ``service.start()`` reschedules them all. Timed: ``start()`` itself, and until the event
   loop has worked off the scheduler's wake-ups.
2. With those jobs in place, ``--batch`` more reminders are proposed and confirmed through the
   service, due over the next ``--spread`` seconds; each fires through the real claim/send/
   finish path to a sender that records the time its send starts, then takes
   ``--send-latency`` seconds (a Bot API call). The delay is that time minus the due time;
   every reminder must fire exactly once.

Prints the figures and the load average, then one summary line; exits 1 if any reminder of
the batch fired twice or not at all.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from agent.reminders import store as rs
from agent.reminders.recurrence import rule_for
from agent.reminders.scheduler import APSchedulerAdapter
from agent.reminders.service import ReminderService
from agent.reminders.store import Reminder, ReminderStore
from bot.schema import MIGRATIONS_ALL
from memory.state.statedb import StateDB
from memory.write.consent import UserActMint

ZONES = ("Asia/Taipei", "Europe/Berlin", "America/New_York", "UTC")


def loadavg() -> str:
    """The 1/5/15-minute load average (Linux), or "n/a"."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def seed(db: Path, reminders: int, users: int, rng: random.Random) -> None:
    """Write the scheduled reminders straight through the store (not timed)."""
    state = StateDB(db, MIGRATIONS_ALL)
    store = ReminderStore(state)
    now = datetime.now(UTC)
    for i in range(reminders):
        user = f"telegram_{100000 + i % users}"
        zone = ZONES[i % len(ZONES)]
        due = now + timedelta(minutes=rng.randint(10, 30 * 24 * 60))
        rule = ""
        if i % 5 == 0:
            kind = ("daily", "weekly", "monthly")[i % 3]
            rule = rule_for(kind, due.astimezone(ZoneInfo(zone))).encode()
        store.add(
            user,
            f"reminder {i}",
            due=due,
            zone=zone,
            now=now,
            recurrence=rule,
            status=rs.SCHEDULED,
        )
    state.close()


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def run(args: argparse.Namespace, db: Path) -> int:
    fired: dict[int, list[float]] = {}

    async def send(reminder: Reminder, text: str) -> str:
        # The delay is measured when the send starts: the scheduler's and the claim's share.
        fired.setdefault(reminder.id, []).append(
            (datetime.now(UTC) - reminder.due).total_seconds()
        )
        if args.send_latency:
            await asyncio.sleep(args.send_latency)
        return str(reminder.id)

    state = StateDB(db, MIGRATIONS_ALL)
    mint = UserActMint()  # the bench plays each user's confirm button
    service = ReminderService(
        ReminderStore(state),
        default_zone="Asia/Taipei",
        clock=lambda: datetime.now(UTC),
        sender=send,
        acts=mint.check,
    )
    if args.scheduler == "ptb":
        from telegram.ext import ApplicationBuilder

        from bot.telegram.reminders import JobQueueAdapter

        app = ApplicationBuilder().token("1:BENCH").build()  # the queue holds it weakly
        queue: Any = app.job_queue
        await queue.start()
        scheduler = queue.scheduler
        service.scheduler = JobQueueAdapter(queue, service.on_due)
    else:
        scheduler = AsyncIOScheduler()
        scheduler.start()
        service.scheduler = APSchedulerAdapter(scheduler, service.on_due)

    t0 = time.perf_counter()
    report = await asyncio.to_thread(service.start) if args.scheduler == "ptb" else service.start()
    t_start = time.perf_counter() - t0
    # Each add_job queued a wake-up on the loop; a callback queued after them runs last.
    loop = asyncio.get_running_loop()
    settled = loop.create_future()
    loop.call_soon(settled.set_result, None)
    await settled
    t_settled = time.perf_counter() - t0
    jobs = len(scheduler.get_jobs())
    print(f"restart: {report.scheduled} reminders rescheduled in {t_start:.2f} s (start()),")
    print(f"         loop settled after {t_settled:.2f} s; {jobs} jobs in the scheduler")

    users = [f"telegram_{100000 + i % args.users}" for i in range(args.batch)]
    now = datetime.now(UTC) + timedelta(seconds=1)
    batch = []
    t1 = time.perf_counter()
    for i, user in enumerate(users):
        due = now + timedelta(seconds=args.spread * i / args.batch)
        row = service.propose(user, f"batch {i}", due)
        act = mint.act(user, str(row.id), "confirm", via="button", kind="reminder")
        batch.append(service.confirm(act, user, row.id).id)
    t_batch = time.perf_counter() - t1
    print(f"batch: {args.batch} proposed + confirmed + scheduled in {t_batch:.2f} s")
    deadline = time.perf_counter() + args.spread + 30
    while len(fired.keys() & set(batch)) < len(batch) and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # a duplicate firing would show up by now
    scheduler.shutdown(wait=False)
    state.close()

    delays = [fired[i][0] * 1000 for i in batch if i in fired]
    missing = [i for i in batch if i not in fired]
    twice = [i for i in batch if len(fired.get(i, [])) > 1]
    if delays:
        p50, p95 = statistics.median(delays), percentile(delays, 0.95)
        print(
            f"fire delay over {len(delays)}: p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
            f"max {max(delays):.1f} ms (send latency {args.send_latency * 1000:.0f} ms)"
        )
    else:
        p50 = p95 = float("nan")
    print(f"missing {len(missing)}, fired twice {len(twice)}; loadavg {loadavg()}")
    print(
        f"SUMMARY scheduler={args.scheduler} reminders={args.reminders} users={args.users} "
        f"start={t_start:.2f}s "
        f"settled={t_settled:.2f}s batch={len(delays)}/{args.batch} fire_p50={p50:.1f}ms "
        f"fire_p95={p95:.1f}ms missing={len(missing)} twice={len(twice)} loadavg={loadavg()}"
    )
    return 1 if missing or twice else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reminders", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--spread", type=float, default=5.0, help="seconds the batch spans")
    parser.add_argument("--send-latency", type=float, default=0.0, help="seconds per send")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--scheduler", choices=("ptb", "aps"), default="ptb")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "pcai.db"
        t0 = time.perf_counter()
        seed(db, args.reminders, args.users, random.Random(args.seed))
        print(f"seeded {args.reminders} reminders in {time.perf_counter() - t0:.1f} s")
        return asyncio.run(run(args, db))


if __name__ == "__main__":
    sys.exit(main())
