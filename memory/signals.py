"""The governance signals search ranks by (seed 002 §4): each memory's access count and weight.

Weights live in MEMORY.md (``weight:``), access counts in ``pcai.db``; search reads both once
per query through :class:`MemorySignals`. MEMORY.md is parsed again only when the file
changed (keyed by :func:`memory.fsutil.file_stamp`), so a query costs one small SQL read.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memory.access import AccessCounter
from memory.errors import UnreadableFileError
from memory.fsutil import file_stamp, read_text
from memory.markdown import parse_memory
from memory.scoring import NEUTRAL_WEIGHT
from memory.users import UserPaths


@dataclass(frozen=True, slots=True)
class EntrySignal:
    """What seed 002's retrieval score knows of one memory besides its relevance."""

    access_count: int = 0
    user_weight: int = NEUTRAL_WEIGHT


class SignalSource(Protocol):
    """Entry id -> signals for one user's memories (absent ids get the neutral signal)."""

    def signals(self, user_key: str) -> Mapping[str, EntrySignal]:
        """The signals of every memory of ``user_key`` that has any."""
        ...


class MemorySignals:
    """Weights from each user's MEMORY.md and access counts from ``pcai.db``."""

    def __init__(self, data_dir: Path, access: AccessCounter) -> None:
        self.data_dir = data_dir
        self.access = access
        self._weights: dict[str, tuple[tuple[int, int, int, int], dict[str, int]]] = {}
        self._lock = threading.Lock()

    def weights(self, user_key: str) -> dict[str, int]:
        """Entry id -> ``user_weight`` of the user's MEMORY.md, parsed once per change."""
        path = UserPaths.of(self.data_dir, user_key).memory_md
        stamp = file_stamp(path)
        with self._lock:
            hit = self._weights.get(user_key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        try:
            text = read_text(path) if stamp != (0, 0, 0, 0) else ""
        except UnreadableFileError:  # whoever reads the file for the answer reports it
            return {}
        weights = {e.id: e.user_weight for e in parse_memory(text).entries}
        with self._lock:
            self._weights[user_key] = (stamp, weights)
        return weights

    def signals(self, user_key: str) -> dict[str, EntrySignal]:
        """Every memory with a weight or an access count."""
        weights = self.weights(user_key)
        counts = self.access.get_many(user_key)
        return {
            eid: EntrySignal(
                counts[eid].count if eid in counts else 0, weights.get(eid, NEUTRAL_WEIGHT)
            )
            for eid in {*weights, *counts}
        }
