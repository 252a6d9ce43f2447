"""Hybrid search over one user's index: sqlite-vec KNN and FTS5 BM25, fused.

Fusion "vector_bonus" is what seed 004 §5 calls RRF: the vector similarity is the base score
and a chunk BM25 also found gets ``bm25_hit_bonus`` (+15%) on top. "rrf" is true reciprocal
rank fusion, ``sum(1 / (rrf_k + rank))`` over both lists, rescaled so the best possible
score is 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.config import RetrievalConfig
from memory.embedders import Embedder
from memory.index import Chunk, IndexStore
from memory.text import fts_match_query

SEARCHABLE = ("active", "low_priority")


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: the chunk, its final score, and each stage's score for ``--explain``."""

    chunk: Chunk
    score: float
    vector_similarity: float | None
    bm25_rank: int | None
    stages: dict[str, float] = field(default_factory=dict)


class HybridSearcher:
    """Vector + BM25 search with fusion (the staged scoring pipeline builds on this)."""

    def __init__(self, store: IndexStore, embedder: Embedder, config: RetrievalConfig) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config

    def search(self, user_key: str, query: str, k: int | None = None) -> list[SearchHit]:
        """Return the best ``k`` chunks of ``user_key`` for ``query``."""
        k = k or self.config.top_k
        depth = max(k * self.config.candidate_multiplier, 20)
        vec_hits = self.store.vec_search(user_key, self.embedder.embed_query(query), depth)
        fts_hits = self.store.fts_search(user_key, fts_match_query(query), depth)
        sim = {cid: 1.0 - dist for cid, dist in vec_hits}
        bm25_rank = {cid: rank for rank, (cid, _) in enumerate(fts_hits, start=1)}
        vec_rank = {cid: rank for rank, (cid, _) in enumerate(vec_hits, start=1)}
        ids = list(dict.fromkeys([*sim, *bm25_rank]))
        chunks = self.store.chunks(ids)
        hits = []
        for cid in ids:
            chunk = chunks.get(cid)
            if chunk is None or chunk.status not in SEARCHABLE:
                continue
            if self.config.fusion == "rrf":
                score = sum(
                    1.0 / (self.config.rrf_k + r[cid]) for r in (vec_rank, bm25_rank) if cid in r
                ) / (2.0 / (self.config.rrf_k + 1))
            else:
                score = max(sim.get(cid, 0.0), 0.0)
                if cid in bm25_rank:
                    score *= 1.0 + self.config.bm25_hit_bonus
                    if cid not in sim:
                        # Found by BM25 only: its rank stands in for the missing similarity.
                        score = 0.5 / (1 + 0.1 * bm25_rank[cid])
            hits.append(
                SearchHit(
                    chunk=chunk,
                    score=score,
                    vector_similarity=sim.get(cid),
                    bm25_rank=bm25_rank.get(cid),
                    stages={"fusion": score},
                )
            )
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:k]
