"""Everything that talks to Ollama (the only module that imports ``ollama``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import httpx
import numpy as np
import numpy.typing as npt
import ollama

from memory.embedders import Vector, normalise
from memory.errors import EmbedderUnavailableError

OLLAMA_DOWN = "Ollama is not reachable at {host}: start it with `ollama serve`"


class OllamaEmbedder:
    """Embeddings from Ollama's /api/embed (``mxbai-embed-large`` by default, 1024 dims)."""

    KNOWN_DIMS: ClassVar[dict[str, int]] = {
        "mxbai-embed-large": 1024,
        "bge-m3": 1024,
        "nomic-embed-text": 768,
    }

    def __init__(
        self,
        host: str,
        model: str = "mxbai-embed-large",
        *,
        dim: int | None = None,
        batch_size: int = 32,
        timeout: float = 60.0,
    ) -> None:
        self.host = host
        self._model = model
        self._client = ollama.Client(host=host, timeout=timeout)
        self._batch = batch_size
        self._dim = dim or self.KNOWN_DIMS.get(model.split(":")[0], 0)

    @property
    def name(self) -> str:
        """``ollama/<model>``, recorded in the index."""
        return f"ollama/{self._model}"

    @property
    def dim(self) -> int:
        """The model's dimension (asked of Ollama once when not known)."""
        if not self._dim:
            self._dim = int(self._embed(["dimension probe"]).shape[1])
        return self._dim

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        try:
            resp = self._client.embed(model=self._model, input=list(texts))
        except (httpx.HTTPError, ConnectionError) as exc:
            raise EmbedderUnavailableError(OLLAMA_DOWN.format(host=self.host)) from exc
        except ollama.ResponseError as exc:
            raise EmbedderUnavailableError(
                f"Ollama could not embed with {self._model}: {exc.error} "
                f"(try `ollama pull {self._model}`)"
            ) from exc
        rows = np.asarray(resp.embeddings, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise EmbedderUnavailableError("Ollama answered /api/embed with a malformed body")
        return normalise(rows)

    def embed_query(self, text: str) -> Vector:
        """Embed a search query."""
        return self._embed([text])[0]

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed documents in batches."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        step = self._batch
        parts = [self._embed(texts[i : i + step]) for i in range(0, len(texts), step)]
        return np.vstack(parts)
