"""Exceptions raised by the memory package."""


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


class CorruptFileError(MemoryStoreError, ValueError):
    """A user's Markdown file cannot be read as text (not UTF-8); nothing is changed."""
