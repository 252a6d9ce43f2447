"""Every exception the bot package raises on purpose, under one base class.

The bot is the edge: a :class:`BackendError` already holds the sentence to show (rendered from
:mod:`agent.texts`), and the CLI prints the others as one ``pcai: ...`` line.
"""

from __future__ import annotations


class BotError(Exception):
    """Base class of every error the bot package raises on purpose."""


# -- settings ------------------------------------------------------------------------------
class SettingsError(BotError, ValueError):
    """A setting has a value that cannot be used."""


# -- a chat request ------------------------------------------------------------------------
class BackendError(BotError):
    """A request the user can fix; the message is one sentence fit to show them.

    ``texts`` holds the sentence in each language where there is one (``said`` picks the
    reader's); the message itself is the sentence for a reader whose language is unknown.
    """

    def __init__(self, message: str, texts: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.texts = texts or {}

    def said(self, lang: str) -> str:
        """The sentence in ``lang`` when there is one, else the message."""
        return self.texts.get(lang, str(self))


# -- pcai doctor ---------------------------------------------------------------------------
class DoctorWarning(BotError):
    """A check found something to look at that does not stop PCAI."""
