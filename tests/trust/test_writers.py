"""Promise 6: one process writes a data dir, or writers take turns (attacks on the locks)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import bot.scheduling
from agent.memory_view import MemoryView
from bot.app import Services, build_services
from bot.cli import main
from bot.jobs import JobRunner, JobSpec
from bot.settings import load_settings
from history.sessions import Session, SessionStore
from history.topic_index import TopicIndex
from memory.base.db import connect
from memory.base.fsutil import atomic_write_text
from memory.base.logs import parse_log
from memory.base.markdown import parse_memory
from memory.write.proposals import PENDING
from tests.fakes.ollama_server import FakeOllama

ROOT = Path(__file__).resolve().parents[2]
SHARED = "cli_shared"
PER_PROCESS = 25

# Each worker waits for the go file, then runs `pcai remember` PER_PROCESS times in a loop
# (the CLI's own main(), so the operator path is the one under attack, at full speed).
REMEMBER_LOOP = """
import sys, time
from pathlib import Path
from bot.cli import main
user, tag, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
while not go.exists():
    time.sleep(0.002)
for i in range(n):
    code = main(["remember", "--user", user, f"{tag} wrote note number {i}"])
    assert code == 0, code
"""


def _env(data_dir: Path, ollama: str = "http://127.0.0.1:9") -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PCAI_") and k not in ("TELEGRAM_BOT_TOKEN", "OLLAMA_HOST")
    }
    env.update(PCAI_DATA_DIR=str(data_dir), OLLAMA_HOST=ollama, PYTHONPATH=str(ROOT))
    return env


def _memory_units_indexed(data_dir: Path, user_key: str) -> list[str]:
    conn = connect(data_dir / "knowledge" / "pcai_memory.sqlite")
    try:
        rows = conn.execute(
            "SELECT unit_id FROM chunks WHERE user_key=? AND path='MEMORY.md' AND ordinal=0",
            (user_key,),
        ).fetchall()
    finally:
        conn.close()
    return sorted(r[0] for r in rows)


def test_two_processes_remembering_into_one_user_keep_every_memory(tmp_path: Path) -> None:
    data_dir = tmp_path / "botmemory"
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", REMEMBER_LOOP, SHARED, tag, str(PER_PROCESS), str(go)],
            cwd=ROOT,
            env=_env(data_dir),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("alpha", "beta")
    ]
    time.sleep(1.5)  # both interpreters are up and waiting
    go.touch()
    for w in workers:
        _, err = w.communicate(timeout=240)
        assert w.returncode == 0, err
    doc = parse_memory((data_dir / "users" / SHARED / "MEMORY.md").read_text(encoding="utf-8"))
    expected = [f"{t} wrote note number {i}" for t in ("alpha", "beta") for i in range(25)]
    assert sorted(e.text for e in doc.entries) == sorted(expected)
    # ... and the index holds each of them once: the two indexers took turns too.
    assert _memory_units_indexed(data_dir, SHARED) == sorted(e.id for e in doc.entries)


# Each worker appends to one user's daily log and session PER_PROCESS times, as a turn does.
LOG_AND_SESSION_LOOP = """
import asyncio, sys, time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from history.dailylog import DailyLog
from history.sessions import SessionStore
data, user, tag = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
n, go = int(sys.argv[4]), Path(sys.argv[5])
log, store = DailyLog(data, timezone.utc), SessionStore(data / "history")
when = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
async def turns():
    for i in range(n):
        log.append_user_message(user, f"{tag} said {i}", when + timedelta(seconds=i), f"{tag}{i}")
        async with store.locked(user) as session:
            session.append("user", f"{tag} said {i}", when)
            await asyncio.sleep(0.001)  # a turn takes a while between load and save
while not go.exists():
    time.sleep(0.002)
asyncio.run(turns())
"""


def test_two_processes_writing_one_users_log_and_session_keep_every_line(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "botmemory"
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                LOG_AND_SESSION_LOOP,
                str(data_dir),
                SHARED,
                tag,
                "25",
                str(go),
            ],
            cwd=ROOT,
            env=_env(data_dir),
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("alpha", "beta")
    ]
    time.sleep(1.0)
    go.touch()
    for w in workers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    expected = sorted(f"{t} said {i}" for t in ("alpha", "beta") for i in range(PER_PROCESS))
    day = "2026-03-01"
    log_text = (data_dir / "users" / SHARED / "memory" / f"{day}.md").read_text(encoding="utf-8")
    assert sorted(r.text for r in parse_log(day, log_text)) == expected
    session = SessionStore(data_dir / "history").load(SHARED)
    assert sorted(m.content for m in session.messages) == expected


def test_a_second_service_on_the_same_data_dir_refuses_in_one_sentence(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    data_dir = tmp_path / "botmemory"
    env = _env(data_dir, fake_ollama.url)
    # The first service: terminal mode (no Telegram token), its stdin kept open.
    first = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert first.stdout is not None and first.stdin is not None
        assert "PCAI terminal chat as" in first.stdout.readline()  # up and chatting
        second = subprocess.run(
            [sys.executable, "-m", "bot.cli", "run"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 1
        assert second.stdout == ""
        assert second.stderr == (
            f"pcai: another PCAI service (pid {first.pid}) is already running on {data_dir}; "
            "stop it first\n"  # one language per line: the CLI's, English
        )
        assert first.poll() is None  # the first one never noticed
    finally:
        if first.stdin is not None:
            first.stdin.close()
        first.wait(timeout=60)
    assert first.returncode == 0
    # Once the first has stopped, the data dir is free again.
    third = subprocess.run(
        [sys.executable, "-m", "bot.cli", "run"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert third.returncode == 0, third.stderr


def test_memory_view_cache_sees_another_writer_within_one_timestamp_tick(
    services: Services,
) -> None:
    """A write by another process that leaves MEMORY.md's size and mtime as they were.

    Filesystems stamp mtimes with a coarse clock (a jiffy, or a second on some), so a second
    writer that replaces the file within one tick with text of the same length leaves
    ``(mtime, size)`` unchanged; the test pins the mtime back to reproduce that tick.
    """
    view = MemoryView(
        services.memory,
        TopicIndex(services.settings.data_dir, services.settings.topic_index),
        services.settings.budget,
        services.counter,
        decide=lambda text, turns: False,
    )
    services.memory.remember(SHARED, "I drink green tea every morning")
    assert [e.text for e in view.parsed(SHARED).doc.entries] == ["I drink green tea every morning"]

    path = services.memory.paths(SHARED).memory_md
    before = path.stat()
    other_writer = path.read_text(encoding="utf-8").replace("green tea", "black tea")
    atomic_write_text(path, other_writer)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size

    assert [e.text for e in view.parsed(SHARED).doc.entries] == ["I drink black tea every morning"]


OTHER = "telegram_9"  # a user the service serves, not the terminal's


class _QuitWhenJobsRan(io.StringIO):
    """The terminal's stdin: types /quit once every scheduled job has run once."""

    def __init__(self, runners: list[JobRunner]) -> None:
        super().__init__()
        self.runners = runners

    def readline(self, size: int | None = -1) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.runners and len(self.runners[0].status) >= 6:  # all six jobs ran
                break
            time.sleep(0.05)
        return "/quit\n"


def test_the_terminal_chat_runs_the_jobs_over_its_own_user_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_ollama: FakeOllama,
) -> None:
    data_dir = tmp_path / "botmemory"
    for name, value in _env(data_dir, fake_ollama.url).items():
        monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.startswith("PCAI_") and n != "PCAI_DATA_DIR"]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)

    # What a service on this data dir looks after for OTHER: every job would touch it now.
    now = datetime.now(UTC)
    services = build_services(load_settings({"PCAI_DATA_DIR": str(data_dir)}))
    services.memory.ensure_index()
    services.memory.remember(OTHER, "I used to collect stamps", now=now - timedelta(days=400))
    waiting = services.pending.add(OTHER, "我的生日是 5 月 3 日", now=now - timedelta(hours=2))
    services.pending.add("cli_me", "I like green tea", now=now - timedelta(hours=2))
    session = Session(OTHER)
    session.append("user", "幫我比較 Raspberry Pi 和 NUC 的耗電", now - timedelta(hours=3))
    services.sessions.save(session)
    services.daily_log.append_user_message(OTHER, "幫我比較耗電", now - timedelta(hours=3), "m1")
    services.close()
    memory_md = (data_dir / "users" / OTHER / "MEMORY.md").read_bytes()

    # Run every job at once (the lifecycle too) instead of at its scheduled time.
    runners: list[JobRunner] = []
    real_start = bot.scheduling.start_scheduler

    def start_now(runner: JobRunner, specs: list[JobSpec]) -> object:
        runners.append(runner)
        hourly = [
            replace(s, every=s.every or timedelta(hours=1), daily_at=None, first=timedelta(0))
            for s in specs
        ]
        return real_start(runner, hourly)

    monkeypatch.setattr(bot.scheduling, "start_scheduler", start_now)
    monkeypatch.setattr("sys.stdin", _QuitWhenJobsRan(runners))
    assert main(["chat", "--user", "me"]) == 0
    out = capsys.readouterr().out

    statuses = runners[0].status
    assert sorted(statuses) == [
        "fading",
        "forget_undo",
        "idle_summaries",
        "index",
        "lifecycle",
        "pending_expiry",
    ]
    assert all(s.ok for s in statuses.values()), statuses
    assert "I like green tea" in out  # the terminal's own expired proposal was reported

    after = build_services(load_settings({"PCAI_DATA_DIR": str(data_dir)}))
    try:
        # OTHER's proposal is left for the service to expire and announce in Telegram.
        assert after.pending.get(OTHER, waiting.id).status == PENDING
        assert not (data_dir / "users" / OTHER / "auto_summaries.md").exists()
        assert "memory/" not in " ".join(after.store.indexed_paths(OTHER))
        assert (data_dir / "users" / OTHER / "MEMORY.md").read_bytes() == memory_md
        assert after.lifecycle.fades is not None
        assert after.lifecycle.fades.told_at(OTHER) == {}  # not told from this terminal
        # ... though each of those jobs had work to do for OTHER.
        assert after.pending.expire_due(now, OTHER)
        assert after.lifecycle.run_user(OTHER, now)
        assert [f.entry.text for f in after.lifecycle.to_tell(OTHER, now)] == [
            "I used to collect stamps"
        ]
    finally:
        after.close()
