"""A confirmed memory's second view: its passage vector plus its text embedded as a query.

e5 embeds the two sides of a search with different prefixes (``query: `` / ``passage: ``); a
conversation that only talks *around* a memory (a magic show for the Christmas-party dance)
lands nearer a memory embedded both ways than one embedded as a passage alone
(bench/madial_rank.py: the memories' order in the first 6, 0.559 -> 0.626 on MADial-Bench).
The view lifts every memory's cosine by ~0.02 as well, so it is kept beside the index vector,
not in its place: the thresholds and section gating read the passage vector as before, and
only the order among the memories a turn found is decided on the view
(:func:`agent.query.memory_order`).

A memory whose text has Traditional Chinese keeps a second such view, its query half read in
Simplified (:func:`memory.index.t2s.to_simplified`), stored after the first in the same row:
e5 orders Traditional Chinese worse than the same text in Simplified (bench/RESULTS.md, issue
32: R@6 of one person's memories 0.529 -> 0.566; folding the passage half too, 0.569, would
cost a second passage embedding); its two query halves are one batch of one embedder call.
Only the order reads it (its mixed list, :func:`agent.query.memory_order`, against the turn's
lines as written: the turn embeds nothing more), so e5's Chinese cosines, which the fold raises
by 0.02-0.035, never meet a threshold. :data:`VIEW_KIND` names this recipe in the index's
``meta``: views made another way are dropped when the index opens, and the deferred work makes
them again (:meth:`memory.index.indexer.Indexer.fill_views`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memory.index.embedders import Embedder, Vector, embed_queries, normalise
from memory.index.t2s import to_simplified

Matrix = npt.NDArray[np.float32]

# How the stored views were made (the index's ``meta``): a change drops them to be made again.
VIEW_KIND = "passage+query, passage+query(t2s)"


def memory_views(embedder: Embedder, texts: Sequence[str], passages: Matrix) -> list[Vector]:
    """Each text's view, ``passages`` being their passage vectors: ``normalise(passage +
    query(text))``, followed by ``normalise(passage + query(to_simplified(text)))`` (2 x dim
    floats) when the fold changes the text."""
    out: list[Vector] = []
    for text, passage in zip(texts, np.asarray(passages, dtype=np.float32), strict=True):
        simplified = to_simplified(text)
        if simplified == text:
            view = normalise(passage + np.asarray(embedder.embed_query(text), dtype=np.float32))
        else:  # both query halves in one embedder call (one batch through one model handle)
            queries = embed_queries(embedder, [text, simplified])
            view = normalise(passage + queries).reshape(-1)
        out.append(view.astype(np.float32))
    return out


def split_view(stored: Vector, dim: int) -> tuple[Vector, Vector]:
    """A stored view as (its view, its Simplified view); the same vector twice when the text
    has nothing to fold (or for an index vector standing in for a view)."""
    return (stored[:dim], stored[dim:]) if len(stored) == 2 * dim else (stored, stored)
