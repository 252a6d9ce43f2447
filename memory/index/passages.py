"""Passage vectors kept by their text, so a section's or a topic's description is embedded once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memory.index.embedders import Embedder, Vector

# A few hundred descriptions cover every user's sections and topics; the oldest go first.
DEFAULT_SIZE = 2048


class PassageCache:
    """Embeds passages through ``embedder`` and keeps the newest ``size`` vectors by text."""

    def __init__(self, embedder: Embedder, size: int = DEFAULT_SIZE) -> None:
        self.embedder = embedder
        self.size = size
        self._vectors: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text; only texts not seen lately are embedded (in one batch)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            rows = self.embedder.embed_passages(missing)
            with self._lock:
                for text, row in zip(missing, rows, strict=True):
                    self._vectors[text] = np.asarray(row, dtype=np.float32)
        with self._lock:
            out = []
            for text in texts:
                vec = self._vectors.get(text)
                if vec is None:  # pushed out by a concurrent caller: embed it alone
                    vec = np.asarray(self.embedder.embed_passages([text])[0], dtype=np.float32)
                self._vectors[text] = vec
                self._vectors.move_to_end(text)
                out.append(vec)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return out
