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
        self._ahead: OrderedDict[str, Future[Vector]] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pcai-query")

    def start(self, text: str) -> None:
        """Begin embedding ``text`` as a query now, in the background."""
        with self._lock:
            if text in self._ahead:
                return
            self._ahead[text] = self._pool.submit(self.inner.embed_query, text)
            while len(self._ahead) > KEEP:
                self._ahead.popitem(last=False)

    def embed_query(self, text: str) -> Vector:
        """The vector :meth:`start` began for ``text``, else one embedded now."""
        with self._lock:
            started = self._ahead.pop(text, None)
        if started is not None:
            return started.result()
        return self.inner.embed_query(text)
