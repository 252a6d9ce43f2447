"""Each person's MEMORY.md parsed once per change, for every reader in the process.

The turn (agent.memory_view) and the search's signals (memory.search.signals) both read
the file: a person whose caches were cold parsed it twice a turn (~7 ms each at 300 memories,
bench/many_users.py). They share this parse, keyed by :func:`file_stamp`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory.base.fsutil import file_stamp, read_text
from memory.base.lru import PoolCache
from memory.base.markdown import MemoryDocument, parse_memory
from memory.base.users import UserPaths

Stamp = tuple[int, int, int, int]
ENTRY_BYTES = 2000  # the entry and the document around its entries


@dataclass(frozen=True, slots=True)
class Parsed:
    """One parse of a person's MEMORY.md."""

    stamp: Stamp
    doc: MemoryDocument
    size: int  # bytes of the text it was parsed from


class ParsedMemory:
    """Each user's MEMORY.md parsed again only when the file changed (thread-safe)."""

    def __init__(self, data_dir: Path, cache: PoolCache[str, Parsed]) -> None:
        self.data_dir = data_dir
        self._cache = cache

    def get(self, user_key: str) -> Parsed:
        """The current parse; raises UnreadableFileError as reading the file does."""
        path = UserPaths.of(self.data_dir, user_key).memory_md
        stamp = file_stamp(path)  # another process's write within one mtime tick counts too
        hit = self._cache.get(user_key)
        if hit is not None and hit.stamp == stamp:
            return hit
        raw = read_text(path) if stamp != (0, 0, 0, 0) else ""
        size = len(raw.encode())
        parsed = Parsed(stamp, parse_memory(raw), size)
        # The entries hold the text a few times over (texts, fields, the parse's lists).
        self._cache.put(user_key, parsed, ENTRY_BYTES + 3 * size)
        return parsed
