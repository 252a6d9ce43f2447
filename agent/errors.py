"""Every exception the agent package raises on purpose, under one base class.

What a person reads about them is said by the pipeline from :mod:`agent.texts`
(``down``, ``garbage``, ``failed``); ``str(error)`` is an English line for the log.
The reminder feature's errors (:mod:`agent.reminders.errors`) derive from the same base.
"""

from __future__ import annotations

import errno
import logging


class AgentError(Exception):
    """Base class of every error the agent package raises on purpose."""


# -- the model -----------------------------------------------------------------------------
class LLMError(AgentError):
    """Base class of the errors an LLM client raises on purpose."""


class LLMUnavailableError(LLMError):
    """The model server could not be reached, or did not answer in time."""


class LLMResponseError(LLMError):
    """The model server answered, but with an error or a body that makes no sense."""


class LLMContextError(LLMResponseError):
    """The prompt did not fit the model's context: the server refused it, or cut it."""


class MessageTooLongError(LLMError):
    """The user's message alone does not fit the model's context (with the rules and the
    reply): it is never cut to fit. ``fits`` is how many of its characters would."""

    def __init__(self, message: str, fits: int) -> None:
        super().__init__(message)
        self.fits = fits


# -- the model's tools ---------------------------------------------------------------------
class ToolArgumentError(AgentError, ValueError):
    """The model's arguments do not match the tool's schema (told to the model, not a user)."""


def log_llm_failure(log: logging.Logger, who: str, exc: LLMError) -> None:
    """Unavailability says where at WARNING; a bad answer's detail may quote the model (DEBUG)."""
    if isinstance(exc, LLMUnavailableError):
        log.warning("%s: LLM failed: %s", who, exc)
        return
    log.warning("%s: LLM answer unusable (%s)", who, type(exc).__name__)
    log.debug("%s: LLM answer unusable: %s", who, exc)


# -- the machine ---------------------------------------------------------------------------
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is a full disk or quota: a file write's ENOSPC or
    SQLite's SQLITE_FULL ("database or disk is full")."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            return True
        if type(exc).__name__ == "OperationalError" and "disk is full" in str(exc):
            return True  # sqlite3 and pysqlite3 alike
        exc = exc.__cause__ or exc.__context__
    return False
