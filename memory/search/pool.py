"""What one turn's searches share: the candidates' rows, vectors and vector-free verdicts.

A turn searches twice (the latest line, and the line mixed with the conversation:
:mod:`agent.query`) with the same BM25 half, so most candidates are the same chunks. A
:class:`CandidatePool` fetches each chunk and its stored vector once and works out once what
does not depend on the query vector (its age, whether it is noise, the user's signals); a
pool lives for one turn and is never shared between users. It also leaves out the chunks the
turn has no use for (``exclude``: the log records its prompt shows as history already) before
they are scored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memory.index.chunks import Chunk, IndexStore
from memory.search import scoring
from memory.search.noise import chunk_noise
from memory.search.signals import EntrySignal, SignalSource


class CandidatePool:
    """Chunks, vectors, ages and noise verdicts of one user's candidates, each fetched once."""

    def __init__(
        self, store: IndexStore, user_key: str, exclude: Callable[[Chunk], bool] | None = None
    ) -> None:
        self.store = store
        self.user_key = user_key
        self.exclude = exclude
        self._chunks: dict[int, Chunk] = {}
        self._vectors: dict[int, npt.NDArray[np.float32]] = {}
        self._missing: set[int] = set()  # asked for: deleted meanwhile, or excluded
        self._ages: dict[tuple[str, datetime], float | None] = {}
        self._noise: dict[int, str | None] = {}
        self._signals: Mapping[str, EntrySignal] | None = None

    def fetch(
        self, ids: Sequence[int]
    ) -> tuple[dict[int, Chunk], dict[int, npt.NDArray[np.float32]]]:
        """The chunks and stored vectors of ``ids`` (the ones still in the index and not
        excluded)."""
        new = [cid for cid in ids if cid not in self._chunks and cid not in self._missing]
        if new:
            found = self.store.chunks(new)
            if self.exclude is not None:
                found = {cid: c for cid, c in found.items() if not self.exclude(c)}
            self._chunks.update(found)
            self._vectors.update(self.store.vectors(list(found), self.user_key))
            self._missing.update(cid for cid in new if cid not in self._chunks)
        chunks = {cid: self._chunks[cid] for cid in ids if cid in self._chunks}
        return chunks, {cid: self._vectors[cid] for cid in chunks if cid in self._vectors}

    def signals(self, source: SignalSource) -> Mapping[str, EntrySignal]:
        """The user's access counts and weights from ``source``, read once per pool."""
        if self._signals is None:
            self._signals = source.signals(self.user_key)
        return self._signals

    def prepare(self, ids: Sequence[int]) -> None:
        """Fetch and judge ``ids`` now (the BM25 candidates, while the query is embedded)."""
        chunks, _ = self.fetch(ids)
        for chunk in chunks.values():
            self.noise(chunk)

    def age(self, chunk: Chunk, now: datetime) -> float | None:
        """:func:`memory.search.scoring.age_days` of the chunk's date, worked out once."""
        key = (chunk.date, now)
        if key not in self._ages:
            self._ages[key] = scoring.age_days(chunk.date, now)
        return self._ages[key]

    def noise(self, chunk: Chunk) -> str | None:
        """:func:`memory.search.noise.chunk_noise` of the chunk, worked out once."""
        if chunk.id not in self._noise:
            self._noise[chunk.id] = chunk_noise(chunk.text, chunk.kind)
        return self._noise[chunk.id]
