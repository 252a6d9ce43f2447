"""The chat load benches' shared harness: the bot behind the Telegram stand-in, players' replies.

``bench/load.py`` and ``bench/many_users.py`` both start the real bot (``pcai run``) against the
project's Telegram Bot API stand-in (its own process) and a fake Ollama answering at once with
the token the person wrote (:func:`echo_model`), and read every reply from the stand-in's call
log (:class:`Replies`).
"""

from __future__ import annotations

import queue
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.prompt import MEMORY_CLOSE, MEMORY_OPEN
from tests.e2e.harness import BotProcess, Emulator, User, bot_env
from tests.fakes.ollama_server import FakeOllama

_TOKEN = re.compile(r"\[(u\d+-m\d+)\]")
# A data block of the user's turn (this turn's memories and log lines, which carry the
# tokens of older messages): the model reads what is inside as data, apart from the words.
_DATA = re.compile(re.escape(MEMORY_OPEN) + ".*?" + re.escape(MEMORY_CLOSE), re.DOTALL)
BASE = 200_000  # the first player's Telegram id


def person_words(turn: str) -> str:
    """What the person wrote in a user's turn: the turn without its data blocks."""
    return _DATA.sub("", turn)


def echo_model(request: dict[str, Any]) -> str:
    """Answer instantly with the token the person wrote in the last user message.

    Since the cache-friendly layout the turn also carries this turn's memories and log lines,
    with older messages' tokens in them; the last token of the whole turn was often one of
    those, so a player waited for a reply that never carried its token.
    """
    for m in reversed(request.get("messages", [])):
        if m.get("role") == "user":
            found = _TOKEN.findall(person_words(str(m.get("content", ""))))
            return f"收到 [{found[-1]}]" if found else "收到"
    return "收到"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def question(n: int, token: str) -> str:
    """A message that searches memory (a question, not a "remember this")."""
    return f"第 {n} 則訊息：我們上次說的進度怎麼樣了？ [{token}]"


def deferred_rows(db: Path) -> int:
    """Rows waiting in the bot's deferred-work queue (read from outside, as SQLite allows)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return 0
    try:
        return int(conn.execute("SELECT COUNT(*) FROM deferred_work").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def wait_drained(db: Path, timeout: float = 300.0) -> float:
    """Wait until the bot's deferred work is done; returns when (perf_counter)."""
    deadline = time.perf_counter() + timeout
    while deferred_rows(db) and time.perf_counter() < deadline:
        time.sleep(0.02)
    return time.perf_counter()


@dataclass
class Replies:
    """One poller for every user: the bot's sendMessage calls, read from the stand-in's log.

    Polling the stand-in once per user would make the load generator, not the bot, the
    bottleneck on a 2-core machine; the call log gives every chat's replies in one request.
    Each reply carrying a token is matched to the time that token was sent.
    """

    emu: Emulator
    sent: dict[str, float] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)  # token -> seconds
    crossed: int = 0
    since: int = 0
    boxes: dict[int, queue.Queue[str]] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)
    guard: threading.Lock = field(default_factory=threading.Lock)

    def box(self, chat_id: int) -> queue.Queue[str]:
        """The tokens answered in ``chat_id``, in order."""
        with self.guard:
            return self.boxes.setdefault(chat_id, queue.Queue())

    def send(self, user: User, index: int, n: int) -> str:
        """Send message ``n`` of player ``index``; returns its token."""
        token = f"u{index}-m{n}"
        with self.guard:
            self.sent[token] = time.perf_counter()
        for attempt in range(3):  # the stand-in may drop a connection under this load
            try:
                user.send(question(n, token))
                break
            except OSError:
                if attempt == 2:
                    raise
                time.sleep(0.1)
        return token

    def ask(self, user: User, index: int, n: int, timeout: float) -> str:
        """Send message ``n`` of player ``index`` and wait for the reply carrying its token
        (an earlier, late reply is skipped); returns the token, answered or lost."""
        box = self.box(user.id)
        token = self.send(user, index, n)
        deadline = time.perf_counter() + timeout
        while True:
            try:
                got = box.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                return token  # lost
            if got == token:
                return token

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                got = self.emu.call("getBotCalls", {"since": self.since, "method": "sendMessage"})
            except OSError:  # a dropped connection under load: ask again
                time.sleep(0.05)
                continue
            now = time.perf_counter()
            for call in got.get("result", []) if isinstance(got, dict) else []:
                self.since = max(self.since, int(call["seq"]))
                params = call.get("params", {})
                chat = int(params.get("chat_id", 0))
                found = _TOKEN.search(str(params.get("text", "")))
                if found is None:
                    continue  # a notice, not a reply
                token = found.group(1)
                with self.guard:
                    if int(token[1:].split("-")[0]) + BASE != chat:
                        self.crossed += 1  # another user's reply: a privacy failure
                        continue
                    if token in self.sent and token not in self.latency:
                        self.latency[token] = now - self.sent[token]
                self.box(chat).put(token)
            time.sleep(0.005)

    def ms(self, tokens: list[str]) -> list[float]:
        """The latencies of ``tokens`` that were answered, in milliseconds."""
        with self.guard:
            return [self.latency[t] * 1000 for t in tokens if t in self.latency]


@dataclass(frozen=True)
class StandIn:
    """A running bot behind the stand-in, with the poller of its replies."""

    bot: BotProcess
    emulator: Emulator
    replies: Replies
    pid: int
    db: Path  # the bot's pcai.db (its deferred-work queue is read from outside)


@contextmanager
def stand_in(data: Path, people: int, env: dict[str, str] | None = None) -> Iterator[StandIn]:
    """Run the bot on ``data`` for players ``BASE .. BASE + people - 1`` (``env`` on top of the
    bot's settings); stopped, with the stand-in and the fake Ollama, on the way out."""
    with FakeOllama() as ollama:
        ollama.chat_handler = echo_model
        emulator = Emulator(own_process=True)  # its HTTP work stays off the players' GIL
        allowed = ",".join(str(BASE + i) for i in range(people))
        bot = BotProcess({**bot_env(emulator, ollama.url, data, allowed), **(env or {})})
        replies = Replies(emulator)
        poller = threading.Thread(target=replies.run, daemon=True)
        try:
            bot.start()
            assert bot.proc is not None
            poller.start()
            yield StandIn(bot, emulator, replies, bot.proc.pid, data / "pcai.db")
        finally:
            replies.stop.set()
            bot.kill()
            emulator.stop()
