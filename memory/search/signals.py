"""The signals search ranks by (docs/retrieval.md, "Retrieval score"): access count, weight.

Weights live in MEMORY.md (``weight:``), access counts in ``pcai.db``; search reads both once
per query through :class:`MemorySignals`. MEMORY.md is parsed again only when the file
changed (:class:`memory.base.parsed.ParsedMemory`, the turn's parse too), so a query costs
one small SQL read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memory.base.lru import MB, CachePool, PoolCache
from memory.base.parsed import ParsedMemory
from memory.errors import UnreadableFileError
from memory.search.scoring import NEUTRAL_WEIGHT
from memory.state.usage import AccessCounter, AccessStat

# What a user's cached weights cost: the entry, and each (entry id, weight) of its dict.
ENTRY_BYTES = 400
ID_BYTES = 150
WEIGHTS_BYTES = 16 * MB  # a pool of its own when none is given


@dataclass(frozen=True, slots=True)
class EntrySignal:
    """What the retrieval score knows of one memory besides its relevance."""

    access_count: int = 0
    user_weight: int = NEUTRAL_WEIGHT


class SignalSource(Protocol):
    """Entry id -> signals for one user's memories (absent ids get the neutral signal)."""

    def signals(self, user_key: str) -> Mapping[str, EntrySignal]:
        """The signals of every memory of ``user_key`` that has any."""
        ...


class MemorySignals:
    """Weights from each user's MEMORY.md and access counts from ``pcai.db``."""

    def __init__(
        self,
        data_dir: Path,
        access: AccessCounter,
        cache: PoolCache[str, tuple[tuple[int, int, int, int], dict[str, int]]] | None = None,
        documents: ParsedMemory | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.access = access
        # In the process's byte-budgeted pool (memory.open's); a pool of its own otherwise.
        pool = CachePool(WEIGHTS_BYTES)
        self._weights = cache if cache is not None else pool.cache("w")
        # The parse the turn reads too (memory.open shares one): a cold turn parses once.
        self.documents = documents or ParsedMemory(data_dir, pool.cache("parsed"))

    def weights(self, user_key: str) -> dict[str, int]:
        """Entry id -> ``user_weight`` of the user's MEMORY.md, parsed once per change."""
        try:
            parsed = self.documents.get(user_key)
        except UnreadableFileError:  # whoever reads the file for the answer reports it
            return {}
        hit = self._weights.get(user_key)
        if hit is not None and hit[0] == parsed.stamp:
            return hit[1]
        weights = {e.id: e.user_weight for e in parsed.doc.entries}
        self._weights.put(user_key, (parsed.stamp, weights), ENTRY_BYTES + ID_BYTES * len(weights))
        return weights

    def signals(self, user_key: str) -> Mapping[str, EntrySignal]:
        """Every memory with a weight or an access count."""
        return _Signals(self.weights(user_key), self.access.get_many(user_key))


class _Signals(Mapping[str, EntrySignal]):
    """One user's signals, each made when asked for: a search asks for its few dozen
    candidates, and building all of a 10,000-memory user's took longer than the search."""

    def __init__(self, weights: Mapping[str, int], counts: Mapping[str, AccessStat]) -> None:
        self._weights = weights
        self._counts = counts

    def __getitem__(self, eid: str) -> EntrySignal:
        if eid not in self._weights and eid not in self._counts:
            raise KeyError(eid)
        count = self._counts[eid].count if eid in self._counts else 0
        return EntrySignal(count, self._weights.get(eid, NEUTRAL_WEIGHT))

    def __iter__(self) -> Iterator[str]:
        return iter({*self._weights, *self._counts})

    def __len__(self) -> int:
        return len({*self._weights, *self._counts})
