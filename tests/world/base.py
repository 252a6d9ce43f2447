"""The world machine's ground: one data folder, one running process, two people, the model.

The two people use the two front ends over the same process: ``telegram_1001`` writes on
Telegram (messages through the Application's update queue), ``cli_ann`` in the terminal chat
(lines through :class:`bot.chat.TerminalChat`); both give their commands to the Desk and the
reminder desk their front end calls. Every rule goes through :meth:`Ground.call`: an
exception that escapes the service fails the step with the act that raised it (a person must
get a sentence, never a traceback).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize

from memory.base.markdown import Entry
from memory.index.embedders import Embedder
from tests.bot.telegram_doubles import Updates
from tests.world import files
from tests.world.bot import TELEGRAM_KEY, TERMINAL_KEY, Front, Process, world_settings
from tests.world.person import Person, Reminder, instant
from tests.world.scripted_model import Model, Plan

T = TypeVar("T")
DEFAULT_ZONE = "Asia/Taipei"  # PCAI_TIMEZONE of the world's process
KEYS = (TELEGRAM_KEY, TERMINAL_KEY)
BACKENDS = ("openai", "ollama")  # PCAI_LLM_BACKEND of the world's process, drawn per run


@dataclass
class Stats:
    """What the runs did, for the figure line."""

    steps: int = 0
    invariants: int = 0
    failures: int = 0


@dataclass
class Env:
    """What every run shares: the embedder, the model server, a folder, the counts."""

    embedder: Embedder
    models: dict[str, Model]  # the model server of each backend, by PCAI_LLM_BACKEND
    root: Path
    stats: Stats = field(default_factory=Stats)


def now() -> datetime:
    """The wall clock, aware (the service reads the same clock)."""
    return datetime.now(UTC)


def diff(before: dict[str, Entry], after: dict[str, Entry]) -> tuple[list[Entry], list[str]]:
    """(entries new in ``after``, ids gone from ``before``)."""
    return [e for i, e in after.items() if i not in before], [i for i in before if i not in after]


class Ground(RuleBasedStateMachine):
    """The folder, the process, the people; the helpers every rule uses."""

    env: Env  # set by the test before the machine runs

    def __init__(self) -> None:
        super().__init__()
        self.stats = self.env.stats
        self.loop = asyncio.new_event_loop()
        self.dir = Path(tempfile.mkdtemp(dir=self.env.root))
        self.data = self.dir / "data"
        self.updates = Updates()  # Telegram's ids keep growing across restarts
        self.shown = 0  # how much of this process's screen was checked
        self.people = {
            TELEGRAM_KEY: Person(TELEGRAM_KEY, "en", DEFAULT_ZONE),
            TERMINAL_KEY: Person(TERMINAL_KEY, "zh", DEFAULT_ZONE),
        }
        self.seen: set[str] = set()  # every proposal id a person was shown

    @initialize(backend=st.sampled_from(BACKENDS))
    def begin(self, backend: str) -> None:
        """The run's model server (drawn: each wire its share of runs), and the first start."""
        self.model = self.env.models[backend]
        self.model.script(Plan())
        self.settings = world_settings(self.data, backend, self.model.url, DEFAULT_ZONE)
        self.proc = self.run(Process.start(self.settings, self.env.embedder, self.updates))

    def teardown(self) -> None:
        """Stop the process and remove the folder."""
        try:
            if hasattr(self, "proc"):
                self.run(self.proc.stop())
        finally:
            self.loop.close()
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- running -------------------------------------------------------------------------
    def run(self, coro: Awaitable[T]) -> T:
        """Run ``coro`` on this machine's event loop."""
        return self.loop.run_until_complete(coro)  # type: ignore[arg-type]

    def call(self, what: str, coro: Awaitable[T]) -> T:
        """Run one act of the person; an exception escaping the service fails the step."""
        self.stats.steps += 1
        try:
            return self.run(coro)
        except Exception as exc:
            raise AssertionError(
                f"an exception escaped {what}: {type(exc).__name__}: {exc}"
            ) from exc

    def front(self, key: str) -> Front:
        """The person's front end on the running process."""
        return self.proc.fronts[key]

    def start(self) -> None:
        """A new process on the folder (the old one is stopped or already gone)."""
        self.proc = self.call(
            "the start", Process.start(self.settings, self.env.embedder, self.updates)
        )
        self.shown = 0

    # -- reading what the person has -------------------------------------------------------
    def live(self, key: str) -> dict[str, Entry]:
        """The person's current memories, from MEMORY.md."""
        return files.live(self.data, key)

    def pending_now(self, key: str) -> dict[str, str]:
        """The proposals waiting for the person (id -> text), as their /pending lists them."""
        return {p.proposal_id: p.text for p in self.proc.backend.pending(key)}

    def rows(self, key: str) -> dict[int, files.Row]:
        """The person's reminders in pcai.db, by id."""
        return {r.id: r for r in files.reminders(self.data, key)}

    def sync_pending(self, person: Person, *, may_return: bool = False) -> None:
        """A forget may blank proposals that held the text; an undo may bring one back."""
        now_ = self.pending_now(person.key)
        kept = {pid: t for pid, t in person.pending.items() if pid in now_}
        if may_return:
            kept |= {pid: t for pid, t in now_.items() if pid in self.seen}
        person.pending = kept

    # -- a chat turn's side effects --------------------------------------------------------
    def turn_began(self, key: str) -> dict[str, Any]:
        """What a turn's effects are measured against."""
        return {
            "pending": self.pending_now(key),
            "rows": set(self.rows(key)),
            "refs": Counter(files.user_refs(self.data, key)),
        }

    def turn_ended(self, key: str, text: str, plan: Plan, began: dict[str, Any], mid: str) -> None:
        """Check and learn what one chat turn did: each side effect once, the message once."""
        person = self.people[key]
        refs = Counter(files.user_refs(self.data, key)) - began["refs"]
        if mid:  # the Telegram message's id: its one record in the person's log
            assert refs[mid] == 1, f"the message {text!r} ({mid}) was logged as {dict(refs)}"
        else:  # the terminal's own id: the one new record of the person's log
            assert sum(refs.values()) == 1, f"the message {text!r} was logged as {dict(refs)}"
            mid = next(iter(refs))
        person.sent.append(mid)
        rows = self.rows(key)
        made = [r for i, r in rows.items() if i not in began["rows"]]
        cards = Counter((r.text, r.due) for r in made)
        assert all(n == 1 for n in cards.values()), (
            f"one message made these reminders more than once: {[(r.id, r.text) for r in made]}"
        )
        meant = {
            instant(datetime.fromisoformat(w).replace(tzinfo=person.tz)): t
            for w, t in plan.reminders
        }
        for r in made:
            assert r.status == "proposed", f"reminder #{r.id} was {r.status} without a yes"
            if r.text in meant.values():
                assert instant(r.due) in meant, (
                    f"the model proposed {plan.reminders!r} in {person.tz.key}; reminder #{r.id} "
                    f"would ring at {instant(r.due)}"
                )
            person.proposed[r.id] = Reminder(r.id, r.text, r.due, True, person.tz.key)
        new = {pid: t for pid, t in self.pending_now(key).items() if pid not in began["pending"]}
        twice = [t for t, n in Counter(new.values()).items() if n > 1]
        assert not twice, f"one message proposed {twice!r} more than once: {sorted(new)}"
        person.pending |= new
        self.seen |= set(new)
        asked = [said for _, said in self.model.asked]
        assert all(s.strip() for s in asked) or not text.strip(), (
            f"the model was asked {asked!r} for the message {text!r}: the person's message "
            "was cut to nothing"
        )
