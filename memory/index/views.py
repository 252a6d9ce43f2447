"""A confirmed memory's second view: its passage vector plus its text embedded as a query.

e5 embeds the two sides of a search with different prefixes (``query: `` / ``passage: ``); a
conversation that only talks *around* a memory (a magic show for the Christmas-party dance)
lands nearer a memory embedded both ways than one embedded as a passage alone
(bench/madial_rank.py: the memories' order in the first 6, 0.559 -> 0.626 on MADial-Bench).
The view lifts every memory's cosine by ~0.02 as well, so it is kept beside the index vector,
not in its place: the thresholds and section gating read the passage vector as before, and
only the order among the memories a turn found is decided on the view
(:func:`agent.query.memory_order`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memory.index.embedders import Embedder, normalise

Matrix = npt.NDArray[np.float32]


def memory_views(embedder: Embedder, texts: Sequence[str], passages: Matrix) -> Matrix:
    """``normalise(passage + query)`` of each text, ``passages`` being their passage vectors."""
    if not len(texts):
        return np.zeros((0, embedder.dim), dtype=np.float32)
    queries = np.stack([np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts])
    return normalise(np.asarray(passages, dtype=np.float32) + queries).astype(np.float32)
