"""The turn's query embedding, started as soon as the message is let in.

Embedding the query is the longest step before the model is asked. :class:`QueryAhead` wraps
the process's embedder: the pipeline calls :meth:`QueryAhead.start` with the text it will
search for once the message passed the access check, and the embedding runs while the session
is loaded, the message logged and compaction checked. When the search then asks for that
text's vector it gets this one (waiting for it if need be): the query is embedded once.
Passages, and queries nobody started, go straight to the wrapped embedder.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.index.embedders import Embedder, Vector, embed_queries, similarity_floor

# Started embeddings nobody asked for (a search that failed first) are dropped past this.
KEEP = 32


class WrappedEmbedder:
    """An embedder that passes for the one it wraps (name, dim, floor) and forwards to it.

    The pipeline's :class:`QueryAhead`, the benchmark's timer and the tests' counters wrap
    the process's embedder this way, so each one only overrides what it adds.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        """The wrapped embedder's name (the index records it)."""
        return self.inner.name

    @property
    def dim(self) -> int:
        """The wrapped embedder's dimension."""
        return self.inner.dim

    @property
    def similarity_floor(self) -> float:
        """The wrapped embedder's floor, so search calibrates as it would without this."""
        return similarity_floor(self.inner)

    def embed_query(self, text: str) -> Vector:
        """The wrapped embedder's query vector."""
        return self.inner.embed_query(text)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The wrapped embedder's query vectors, in one call of it (see :func:`embed_queries`)."""
        return embed_queries(self.inner, texts)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The wrapped embedder's passage vectors."""
        return self.inner.embed_passages(texts)


class QueryAhead(WrappedEmbedder):
    """An :class:`~memory.index.embedders.Embedder` whose query embeddings can start early."""

    def __init__(self, inner: Embedder, workers: int = 2) -> None:
        super().__init__(inner)
        # A text's started embedding: a future of its vector (row None), or of a batch's rows
        # and the text's row in it.
        self._ahead: OrderedDict[str, tuple[Future[Any], int | None]] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pcai-query")

    def start(self, text: str, *more: str) -> None:
        """Begin embedding ``text`` as a query now, in the background; with ``more`` (the same
        line in Simplified), all of them in one call of the embedder: one batch, one handle."""
        with self._lock:
            todo = [t for t in dict.fromkeys((text, *more)) if t not in self._ahead]
            if len(todo) == 1:
                self._ahead[todo[0]] = (self._pool.submit(self.inner.embed_query, todo[0]), None)
            elif todo:
                batch = self._pool.submit(embed_queries, self.inner, todo)
                self._ahead.update((t, (batch, row)) for row, t in enumerate(todo))
            while len(self._ahead) > KEEP:
                self._ahead.popitem(last=False)

    def embed_query(self, text: str) -> Vector:
        """The vector :meth:`start` began for ``text``, else one embedded now."""
        with self._lock:
            started = self._ahead.pop(text, None)
        if started is None:
            return self.inner.embed_query(text)
        future, row = started
        vec: Vector = future.result() if row is None else future.result()[row]
        return vec

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The vectors :meth:`start` began for ``texts``; the others embedded now, together."""
        with self._lock:
            started = {t: self._ahead.pop(t) for t in texts if t in self._ahead}
        rest = [t for t in dict.fromkeys(texts) if t not in started]
        fresh = dict(zip(rest, embed_queries(self.inner, rest), strict=True)) if rest else {}
        rows: list[Vector] = []
        for t in texts:
            if t in fresh:
                rows.append(fresh[t])
                continue
            future, row = started[t]
            rows.append(future.result() if row is None else future.result()[row])
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(rows).astype(np.float32)
