"""Passage vectors kept by their text, so a section's or a topic's description is embedded once."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from memory.index.embedders import Embedder, Vector

if TYPE_CHECKING:
    from memory.index.chunks import IndexStore

# A few hundred descriptions cover every user's sections and topics; the oldest go first.
DEFAULT_SIZE = 2048


def passage_key(embedder: Embedder, text: str) -> str:
    """A stored vector's key: a hash of the embedder's name and the text."""
    return hashlib.sha256(f"{embedder.name}\0{text}".encode()).hexdigest()


class PassageCache:
    """Embeds passages through ``embedder`` and keeps the newest ``size`` vectors by text.

    With ``store``, a user's passages (:meth:`vectors` with ``user_key``) are also kept in the
    index, so the user's turn after an eviction or a restart reads them instead of embedding.
    """

    def __init__(
        self, embedder: Embedder, size: int = DEFAULT_SIZE, store: IndexStore | None = None
    ) -> None:
        self.embedder = embedder
        self.size = size
        self.store = store
        self._vectors: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str], user_key: str | None = None) -> list[Vector]:
        """One vector per text; only texts not seen lately (nor stored for ``user_key``) are
        embedded (in one batch)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        stored: dict[str, Vector] = {}
        if missing and self.store is not None and user_key is not None:
            keys = {t: passage_key(self.embedder, t) for t in missing}
            found = self.store.passage_vectors(user_key, list(keys.values()))
            stored = {t: found[k] for t, k in keys.items() if k in found}
        embed = [t for t in missing if t not in stored]
        if missing:
            rows = (
                self.embedder.embed_passages(embed)
                if embed
                else np.zeros((0, self.embedder.dim), dtype=np.float32)
            )
            with self._lock:
                self._vectors.update(stored)
                for text, row in zip(embed, rows, strict=True):
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
        if embed and self.store is not None and user_key is not None:
            # The user's current set: descriptions that changed since are dropped.
            kept = [passage_key(self.embedder, t) for t in texts]
            self.store.keep_passages(user_key, dict(zip(kept, out, strict=True)))
        return out
