"""Many people on one bot process: memory held within ``PCAI_CACHE_MB``, latency and open files.

Generates N people (``--people``, 1,000 by default), each with ``--memories`` memories in
MEMORY.md and ``--days`` days of daily logs of ``--lines`` lines, and indexes them. Generating
a million real e5 vectors would take hours here, so the index is filled by an embedder that
reports e5's name and dimension and gives each passage a vector near one of 64 real e5
passage vectors (Gaussian noise, cosine ~0.97): the bot's real e5 queries then meet the
cosines e5 gives, and the matrices are the size e5's are. ``--data DIR`` keeps the generated
folder and uses it again when it already holds the same shape.

Then runs the real bot (``pcai run``, the Telegram stand-in, an instant fake Ollama as in
``bench/load.py``) with ``PCAI_CACHE_MB`` (``--cache-mb``, the shipped default unless set):

1. the warm-up: the 10 people, 2 messages each, 10 at once (the embedder's second model
   handle is made only when two queries run at once, ~100 MB); the bot's RSS then, plus the
   pages of its mapped model files (the e5 model, ``*.bin``/``*.onnx``...) not yet resident,
   is the fixed base (it holds those 10 people's caches too, a few MB), its open files the
   baseline. The model file is mapped, and its pages come in as queries touch them: how many
   is bounded by the file's size, not by people, so the base counts the whole file (an upper
   bound, measured from ``/proc/<pid>/smaps``) rather than only what the warm-up touched;
2. the 10-person figure: 10 people, closed loop (10 at once), as many messages in all as the
   N people send (``--ten-messages`` each; 100 by default, for 1,000 people of one message).
   The same count, so both phases carry the deferred work (indexing, topics) their messages
   cause: 10 x 10 messages end in seconds with their indexing still queued behind them (it
   is done after the phase), which a phase of 1,000 messages cannot do, so that short phase's
   p95 measured the replies without their background work (580-900 ms against 1,080 here);
3. every one of the N people sends ``--messages`` messages, played by 10 players at once
   (each through its share of the people in turn), so most turns find the person's caches
   cold or evicted: the p95 of those as a multiple of the 10-person p95.

    .venv/bin/python bench/many_users.py [--people 1000] [--memories 300] [--days 30]

Last line: ``many users: <n> people, RSS <n> MB (budget <b>), p95 <x>x the 10-person p95,
fds <k>`` (``fds``: open files after the run minus after the warm-up; sockets, the HTTP
clients' keep-alive connections, are printed apart: their pools bound them). Bar: RSS at most the
base plus the budget, p95 at most 1.5x, no growth of open files.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import memory
from bench.chatload import BASE, Replies, percentile, stand_in, wait_drained
from bench.pipeline import EN, SECTIONS, WORDS, ZH
from memory.base.fsutil import atomic_write_text
from memory.base.logs import format_record, log_header
from memory.base.markdown import Entry, MemoryDocument, render_memory
from memory.base.users import UserPaths
from memory.config import DEFAULT_CACHE_MB
from memory.index.embedders import E5Embedder
from memory.index.indexer import RACY_WINDOW_NS
from tests.e2e.harness import Emulator, User

Matrix = npt.NDArray[np.float32]
NOISE = 0.013  # per dimension: |noise| ~ 0.25, cosine ~0.97 to the bank vector
PLAYERS = 10


class NearE5:
    """e5's name and dimension; each passage near one of a bank of real e5 passage vectors."""

    def __init__(self, bank: Matrix) -> None:
        self.bank = bank
        self.name = E5Embedder.MODEL
        self.dim = int(bank.shape[1])

    def embed_query(self, text: str) -> Matrix:
        return self.embed_passages([text])[0]

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())
            rng = np.random.default_rng(seed)
            row = self.bank[seed % len(self.bank)] + rng.normal(0, NOISE, self.dim)
            out[i] = row / np.linalg.norm(row)
        return out


def sentence(rng: random.Random, i: int) -> str:
    """One made-up memory or log line (the bench's templates, numbered)."""
    template = rng.choice(ZH if rng.random() < 0.6 else EN)
    values = {k: rng.choice(v) for k, v in WORDS.items()}
    n, m, d = rng.randint(1, 9), rng.randint(1, 12), rng.randint(1, 28)
    return template.format(n=n, m=m, d=d, **values) + f"（#{i}）"


def person(data: Path, key: str, seed: int, memories: int, days: int, lines: int) -> None:
    """Write one person's MEMORY.md and daily logs."""
    rng = random.Random(seed)
    paths = UserPaths.of(data, key)
    start = datetime(2025, 3, 1).astimezone()
    entries = tuple(
        Entry(
            id=f"m-{seed:05d}-{i:04d}",
            text=sentence(rng, i),
            section=rng.choice(SECTIONS),
            user_weight=rng.randint(3, 8),
            created_at=(start + timedelta(hours=i)).isoformat(timespec="seconds"),
        )
        for i in range(memories)
    )
    paths.memory_md.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(paths.memory_md, render_memory(MemoryDocument(entries=entries)))
    for d in range(days):
        day = start + timedelta(days=d)
        text = log_header(f"{day:%Y-%m-%d}")
        for j in range(lines):
            when = day + timedelta(minutes=20 * j)
            text += format_record(when, "user" if j % 2 == 0 else "assistant", sentence(rng, j))
        path = paths.daily_log(f"{day:%Y-%m-%d}")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)


def generate(data: Path, people: int, memories: int, days: int, lines: int) -> None:
    """Write and index every person (skipped when ``data`` already holds this shape)."""
    shape = f"{people} {memories} {days} {lines}\n"
    stamp = data / "many_users.shape"
    if stamp.exists() and stamp.read_text() == shape:
        print(f"using the people generated in {data}", file=sys.stderr)
        return
    rng = random.Random(5)
    e5 = E5Embedder()
    bank = e5.embed_passages([sentence(rng, i) for i in range(64)])
    started = time.perf_counter()
    with memory.open(data, embedder=NearE5(np.asarray(bank, dtype=np.float32))) as library:
        for i in range(people):
            key = f"telegram_{BASE + i}"
            person(data, key, i, memories, days, lines)
            library.reindex(key)
            if (i + 1) % 50 == 0:
                print(
                    f"generated {i + 1}/{people} people, {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                )
        # Files indexed within two seconds of being written keep no trusted state (racy
        # mtimes: memory/index/indexer.py), so the bot's first minute job would read all
        # 31,000 files again, once; a month of use leaves them settled: settle them here.
        time.sleep(RACY_WINDOW_NS / 1e9)
        for i in range(people):
            library.service.indexer.sync_user(f"telegram_{BASE + i}")
        chunks = library.store.count()
    stamp.write_text(shape)
    print(f"indexed {chunks} chunks in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def status_mb(pid: int, field: str) -> float:
    """One size of process ``pid``'s ``/proc/<pid>/status`` in MB (``VmRSS``, ``RssAnon``...)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """CPU seconds process ``pid`` has used (user + system), from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB."""
    return status_mb(pid, "VmRSS")


def resident(pid: int) -> str:
    """Resident memory, its anonymous part apart from mapped files' pages (the e5 model file,
    libraries' code: the kernel may drop and re-read those, and they are bounded by the
    files' sizes, not by people)."""
    return (
        f"RSS {rss_mb(pid):.0f} MB (anonymous {status_mb(pid, 'RssAnon'):.0f}, "
        f"files {status_mb(pid, 'RssFile'):.0f})"
    )


# Mapped data files that are models (their pages come in as the model is used).
MODEL_SUFFIXES = (".bin", ".onnx", ".safetensors", ".gguf")


def model_pages_mb(pid: int) -> tuple[float, float]:
    """(size, resident) in MB of process ``pid``'s mapped model files, from its smaps."""
    resident_kb = 0.0
    sizes: dict[str, int] = {}
    path = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and ":" not in head[0]:  # a mapping's first line
            path = head[5] if len(head) > 5 else ""
            if path.endswith(MODEL_SUFFIXES) and os.path.isfile(path):
                sizes[path] = os.path.getsize(path)
        elif head and head[0] == "Rss:" and path.endswith(MODEL_SUFFIXES):
            resident_kb += int(head[1])
    size = sum(sizes.values()) / 2**20
    return size, resident_kb / 1024


def base_mb(pid: int) -> float:
    """The fixed base: RSS plus the model files' pages not resident yet (bounded by size)."""
    size, resident_now = model_pages_mb(pid)
    return rss_mb(pid) + max(0.0, size - resident_now)


@dataclass(frozen=True)
class Open:
    """What process ``pid`` holds open: files (and pipes), and sockets."""

    files: int
    sockets: int

    def __str__(self) -> str:
        return f"{self.files} files, {self.sockets} sockets"


def open_files(pid: int) -> Open:
    """File descriptors process ``pid`` holds, files apart from sockets.

    Sockets are the HTTP clients' keep-alive connections (to the model server, to Telegram),
    bounded by their pools, not by how many people wrote: a busier phase keeps a few more.
    """
    files = sockets = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:"):
            sockets += 1
        else:
            files += 1
    return Open(files, sockets)


def play(
    replies: Replies,
    emulator: Emulator,
    people: list[int],
    first: int,
    messages: int,
    timeout: float,
) -> list[str]:
    """PLAYERS players at once, each through its share of ``people`` in turn: every person
    sends ``messages`` messages, each after the reply to the previous one."""
    tokens: list[str] = []
    guard = threading.Lock()

    def player(share: list[int]) -> None:
        for index in share:
            user = User(emulator, BASE + index, f"P{index}")
            for n in range(first, first + messages):
                token = replies.ask(user, index, n, timeout)
                with guard:
                    tokens.append(token)

    shares = [people[i::PLAYERS] for i in range(PLAYERS)]
    threads = [threading.Thread(target=player, args=(s,)) for s in shares if s]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--memories", type=int, default=300, help="memories a person")
    parser.add_argument("--days", type=int, default=30, help="days of daily logs a person")
    parser.add_argument("--lines", type=int, default=20, help="log lines a day")
    parser.add_argument("--messages", type=int, default=1, help="messages each person sends")
    parser.add_argument(
        "--ten-messages", type=int, help="each of the 10 people (default: as many in all)"
    )
    parser.add_argument("--cache-mb", type=int, default=DEFAULT_CACHE_MB)
    parser.add_argument("--data", type=Path, help="keep (and reuse) the generated folder here")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or Path(tmp) / "botmemory"
        generate(data, args.people, args.memories, args.days, args.lines)
        env = {"PCAI_CACHE_MB": str(args.cache_mb)}
        with stand_in(data, args.people, env) as on:
            return run(on.replies, on.emulator, on.pid, on.db, args)


def run(replies: Replies, emulator: Emulator, pid: int, db: Path, args: argparse.Namespace) -> int:
    """The three phases against the running bot; 0 when every bar holds."""
    # e5 loads on the first query, its second handle when two run at once.
    play(replies, emulator, list(range(10)), 0, 2, args.timeout)
    wait_drained(db)
    base, fds0 = base_mb(pid), open_files(pid)
    model, paged = model_pages_mb(pid)
    print(
        f"after the warm-up: {resident(pid)}, open {fds0}; model files {model:.0f} MB "
        f"({paged:.0f} resident): base {base:.0f} MB"
    )

    started, cpu0 = time.perf_counter(), cpu_s(pid)
    each = args.ten_messages or max(1, args.people * args.messages // 10)
    ten = play(replies, emulator, list(range(10)), 100, each, args.timeout)
    wait_drained(db)
    ten_cpu = (cpu_s(pid) - cpu0) * 1000 / max(1, len(ten))
    ten_ms = replies.ms(ten)
    ten95 = percentile(ten_ms, 95)
    print(
        f"10 people: {len(ten)} messages in {time.perf_counter() - started:.0f} s, "
        f"p50 {statistics.median(ten_ms):.0f} ms, "
        f"p95 {ten95:.0f} ms, lost {len(ten) - len(ten_ms)}, bot CPU {ten_cpu:.0f} ms a message; "
        f"{resident(pid)}"
    )

    started, cpu0 = time.perf_counter(), cpu_s(pid)
    many = play(replies, emulator, list(range(args.people)), 200, args.messages, args.timeout)
    wait_drained(db)
    many_ms = replies.ms(many)
    many_cpu = (cpu_s(pid) - cpu0) * 1000 / max(1, len(many))
    many95 = percentile(many_ms, 95)
    rss, fds = rss_mb(pid), open_files(pid)
    lost = len(many) - len(many_ms)
    print(
        f"{args.people} people: {len(many)} messages in "
        f"{time.perf_counter() - started:.0f} s, p50 {statistics.median(many_ms):.0f} ms, "
        f"p95 {many95:.0f} ms, lost {lost}, crossed {replies.crossed}, bot CPU {many_cpu:.0f} ms "
        f"a message; {resident(pid)} "
        f"(base {base:.0f} + budget {args.cache_mb} = {base + args.cache_mb:.0f}); open {fds}; "
        f"load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} cores"
    )
    print(f"p50 {statistics.median(many_ms) / statistics.median(ten_ms):.2f}x the 10-person p50")
    print(
        f"many users: {args.people} people, RSS {rss:.0f} MB (budget {args.cache_mb}), "
        f"p95 {many95 / ten95:.2f}x the 10-person p95, fds {fds.files - fds0.files}"
    )
    ok = rss <= base + args.cache_mb and many95 <= 1.5 * ten95 and fds.files <= fds0.files
    return 0 if ok and lost == 0 and replies.crossed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
