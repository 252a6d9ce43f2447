"""A person's usual line: what all their turns share, taken out of the memories' order.

e5 places much of a person's talk near a few of their memories whatever it is about (MADial in
Simplified Chinese: one memory, a day at the amusement park, stood in the first six of 35 of 76
conversations and was relevant to none). Those memories are near the person's *usual* line, not
near this turn. So the order among the memories a turn found (:func:`agent.query.memory_order`)
compares them with the turn's lines minus the person's usual line: a decaying mean of the query
vectors of their earlier lines (each older line weighs ``1 - 1/BACKGROUND_LINES`` of the next).
bench/RESULTS.md, issue 32: MADial through the bot, Simplified 0.578 -> 0.620, Traditional
0.575 -> 0.612; English unchanged (160 dialogues 0.662 -> 0.661, the same person 0.626 -> 0.627).

- A line joins once ``hold`` newer lines came after it (the turn's own context, which would
  otherwise be subtracted from itself); the background is read once ``BACKGROUND_MIN_LINES``
  joined (a few lines are one topic, not how the person talks).
- A line whose text has a secret never joins: the background is stored, and secrets are stored
  nowhere (the turn tells, by :func:`memory.base.guards.mask`, which it masks anyway).
- It is kept in the index (:meth:`memory.index.chunks.IndexStore.line_background`), so a
  restart keeps it; the lines not joined yet are in memory only. Derived, like the rest of the
  index: a rebuild starts it again, and a forgotten or changed memory drops it (a forgotten
  line may have been one of its lines).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memory.base.lru import CappedMap
from memory.index.embedders import Vector

# How many lines the background is about (the decay: each older line weighs 1 - 1/this of the
# next): MADial, offline, 30 and 50 lines within 0.005 of each other (bench/RESULTS.md).
BACKGROUND_LINES = 30
# Lines joined before the background is read.
BACKGROUND_MIN_LINES = 8
# People whose lines not joined yet are kept; the least recently active go past this.
MAX_USERS = 4096


class BackgroundStore(Protocol):
    """Where each person's background is kept (the index: IndexStore)."""

    def line_background(self, user_key: str) -> tuple[npt.NDArray[np.float32], float, int] | None:
        """(decayed sum of the lines' vectors, its weight, lines joined), or None."""
        ...

    def keep_line_background(
        self, user_key: str, total: npt.NDArray[np.float32], weight: float, lines: int
    ) -> None:
        """Store the person's background."""
        ...


class LineBackground:
    """Each person's usual line (thread-safe); see the module's docstring."""

    def __init__(
        self,
        store: BackgroundStore,
        hold: int,
        lines: int = BACKGROUND_LINES,
        min_lines: int = BACKGROUND_MIN_LINES,
        max_users: int = MAX_USERS,
    ) -> None:
        self._store = store
        self._hold = max(0, hold)
        self._decay = 1.0 - 1.0 / max(1, lines)
        self._min = min_lines
        self._waiting: CappedMap[str, deque[Vector]] = CappedMap(max_users)
        self._lock = threading.Lock()

    def of(self, user_key: str) -> Vector | None:
        """The person's usual line (a mean of unit vectors: shorter than one), or None while
        fewer than ``min_lines`` lines joined it."""
        got = self._store.line_background(user_key)
        if got is None:
            return None
        total, weight, lines = got
        if lines < self._min or weight <= 0:
            return None
        return (total / np.float32(weight)).astype(np.float32)

    def add(self, user_key: str, vector: Vector, *, secret: bool) -> None:
        """The turn's line, by its query vector: it joins the background once ``hold`` newer
        lines came; never when its text holds a ``secret``."""
        with self._lock:
            waiting = self._waiting.get(user_key)
            if waiting is None:
                waiting = self._waiting[user_key] = deque()
            if secret:
                return
            waiting.append(np.asarray(vector, dtype=np.float32))
            while len(waiting) > self._hold:
                self._join(user_key, waiting.popleft())

    def _join(self, user_key: str, vector: Vector) -> None:
        got = self._store.line_background(user_key)
        total, weight, lines = got if got is not None else (np.zeros_like(vector), 0.0, 0)
        if total.shape != vector.shape:  # another embedder's (the index is rebuilt then)
            total, weight, lines = np.zeros_like(vector), 0.0, 0
        decay = np.float32(self._decay)
        self._store.keep_line_background(
            user_key, decay * total + vector, self._decay * weight + 1.0, lines + 1
        )
