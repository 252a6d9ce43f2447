"""Long-term memory: Markdown as the source of truth, SQLite (FTS5 + sqlite-vec) as its index.

The front door is :func:`open`::

    import memory

    with memory.open("my-data") as m:
        m.remember("cli_me", "I take my coffee black, no sugar")
        hits = m.search("cli_me", "coffee")

A library user needs only the names in ``__all__``; the modules behind them may move. They
load on first use, so ``history/`` importing a small helper (``memory.base.fsutil``) does not load
the index, numpy and SQLite with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.api import Memory, open
    from memory.base.markdown import Entry
    from memory.config import (
        IndexConfig,
        LifecycleConfig,
        MemoryConfig,
        PendingConfig,
        RetrievalConfig,
    )
    from memory.errors import EntryNotFoundError, MemoryStoreError
    from memory.index.embedders import E5Embedder, Embedder
    from memory.search.results import Dropped, SearchHit, SearchResult
    from memory.write.decisions import ProposalRefusedError

__all__ = [
    "Dropped",
    "E5Embedder",
    "Embedder",
    "Entry",
    "EntryNotFoundError",
    "IndexConfig",
    "LifecycleConfig",
    "Memory",
    "MemoryConfig",
    "MemoryStoreError",
    "PendingConfig",
    "ProposalRefusedError",
    "RetrievalConfig",
    "SearchHit",
    "SearchResult",
    "open",
]

# Public name -> the module that defines it (a test keeps the two lists the same).
_HOME = {
    "Dropped": "memory.search.results",
    "E5Embedder": "memory.index.embedders",
    "Embedder": "memory.index.embedders",
    "Entry": "memory.base.markdown",
    "EntryNotFoundError": "memory.errors",
    "IndexConfig": "memory.config",
    "LifecycleConfig": "memory.config",
    "Memory": "memory.api",
    "MemoryConfig": "memory.config",
    "MemoryStoreError": "memory.errors",
    "PendingConfig": "memory.config",
    "ProposalRefusedError": "memory.write.decisions",
    "RetrievalConfig": "memory.config",
    "SearchHit": "memory.search.results",
    "SearchResult": "memory.search.results",
    "open": "memory.api",
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
