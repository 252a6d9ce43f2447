"""Exceptions raised by the memory package."""

from __future__ import annotations

from pathlib import Path


class MemoryStoreError(Exception):
    """Base class of every error the memory package raises on purpose."""


class StorageUnavailableError(MemoryStoreError):
    """SQLite cannot load sqlite-vec on this Python."""


class EmbedderUnavailableError(MemoryStoreError):
    """The embedder cannot produce vectors (model missing, Ollama unreachable, ...)."""


class InvalidUserKeyError(MemoryStoreError):
    """A user key that could escape its folder or is not of a known form."""


class EntryNotFoundError(MemoryStoreError):
    """No memory entry with that id belongs to that user."""


# -- one user's file cannot be read ------------------------------------------------------
class UnreadableFileError(MemoryStoreError):
    """One of a user's files cannot be read; only what needs that file stops.

    Raised with the fields a notice needs (which file, where, why); the sentence a person
    reads is rendered at the edge. Nothing is ever rewritten on the way.
    """

    def __init__(self, path: Path, reason: str, position: int | None = None) -> None:
        where = f" (byte {position})" if position is not None else ""
        super().__init__(f"{path} {reason}{where}: fix or restore it; nothing was changed")
        self.path = path
        self.reason = reason
        self.position = position  # byte offset of the first bad byte, when known

    @property
    def stamp(self) -> str:
        """The file's mtime and size now: a problem is "the same" until the file changes."""
        try:
            st = self.path.stat()
        except OSError:
            return "missing"
        return f"{st.st_mtime_ns}:{st.st_size}"


class CorruptFileError(UnreadableFileError, ValueError):
    """A user's Markdown file cannot be read as text (not UTF-8); nothing is changed."""

    def __init__(self, path: Path, position: int, line: int) -> None:
        super().__init__(path, "is not valid UTF-8", position)
        self.line = line  # 1-based line of the first bad byte


# -- pcai.db -----------------------------------------------------------------------------
class StateDamagedError(MemoryStoreError):
    """``pcai.db`` is not a readable SQLite database (garbage, truncated, malformed)."""


class StateTooNewError(MemoryStoreError):
    """``pcai.db`` records migrations this version does not know: a newer PCAI wrote it."""

    def __init__(self, path: Path, unknown: tuple[str, ...]) -> None:
        super().__init__(
            f"{path} was written by a newer version of PCAI (it has schema migration "
            f"{', '.join(unknown)}, which this version does not know): run that version or "
            "a newer one; the file was not changed"
        )
        self.path = path
        self.unknown = unknown


class StateSchemaError(MemoryStoreError):
    """A ``pcai.db`` made before migrations has a table without a column it must have."""

    def __init__(self, path: Path, table: str, missing: tuple[str, ...]) -> None:
        super().__init__(
            f"{path}: table {table} lacks column {', '.join(missing)}, so this is not a "
            "pcai.db this version can adopt; the file was not changed"
        )
        self.path = path
        self.table = table
        self.missing = missing
