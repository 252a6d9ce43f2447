"""Every exception the history package raises on purpose, under one base class.

Like :mod:`memory.errors`: a ``code`` and fields for the edge to say (:mod:`agent.texts`),
``str(error)`` an English line for the log.
"""

from __future__ import annotations


class HistoryError(Exception):
    """Base class of every error the history package raises on purpose.

    ``code`` names the catalogue sentence for the error and ``fields`` fill it in.
    """

    code = "history_error"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.fields: dict[str, object] = fields


# -- sessions ------------------------------------------------------------------------------
class SessionError(HistoryError, ValueError):
    """A session id or file that cannot be used (a ``ValueError`` too: it is bad input)."""

    code = "session_invalid"
