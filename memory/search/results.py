"""What a search returns: the kept hits, the dropped candidates and why, the timings."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.index.chunks import Chunk


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: the chunk (and its source), its final score, each stage's score."""

    chunk: Chunk
    score: float
    vector_similarity: float | None
    bm25_rank: int | None
    stages: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Dropped:
    """A candidate that a stage removed (or MMR pushed out of the top k), and why."""

    chunk: Chunk
    stage: str
    score: float
    reason: str
    stages: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Kept hits in final order, dropped candidates, and timings in milliseconds."""

    hits: list[SearchHit]
    dropped: list[Dropped]
    embed_ms: float = 0.0
    search_ms: float = 0.0
