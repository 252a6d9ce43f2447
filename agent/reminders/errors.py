"""The reminder package's exceptions: a code and its fields, said through the catalogue."""

from __future__ import annotations

from agent.errors import AgentError
from agent.texts import say


class ReminderError(AgentError):
    """Base class of every error the reminder package raises on purpose.

    ``code`` names the catalogue sentence (key ``reminder_<code>``) and ``fields`` fill it in;
    ``str(error)`` is the English and the Chinese sentence joined, for the log.
    """

    def __init__(self, code: str, **fields: object) -> None:
        self.code = code
        self.fields: dict[str, object] = fields
        super().__init__(f"{self.en} {self.zh}")

    def text(self, lang: str) -> str:
        """The sentence for a person reading ``lang``."""
        return say(f"reminder_{self.code}", lang, **self.fields)

    @property
    def en(self) -> str:
        return self.text("en")

    @property
    def zh(self) -> str:
        return self.text("zh")


# -- parsing ---------------------------------------------------------------------------------
class ParseError(ReminderError):
    """A ``/remind`` phrase the parser cannot turn into a time and a text.

    ``code`` is one of ``no_time``, ``no_text``, ``bad_date``, ``bad_time``, ``past``,
    ``conflict``, ``bad_number``, ``too_far``, ``too_long``.
    """


def parse_error(code: str, **values: object) -> ParseError:
    """The :class:`ParseError` of ``code`` with its fields."""
    return ParseError(code, **values)


# -- the service -----------------------------------------------------------------------------
class ReminderNotFoundError(ReminderError):
    """No reminder with that id belongs to the user asking."""


class ReminderStateError(ReminderError):
    """The reminder cannot do that in its present status (already answered, cancelled...)."""


class ReminderExpiredError(ReminderStateError):
    """The proposal waited longer than its expiry and was dropped."""


class ReminderInPastError(ReminderError):
    """The time asked for has already passed."""


class UnknownZoneError(ReminderError):
    """A time zone name the system does not know."""


class BadBriefingTimeError(ReminderError):
    """A briefing time that is not ``HH:MM`` or ``off``."""


# -- sending ---------------------------------------------------------------------------------
class NotDeliveredError(AgentError):
    """Raised by a sender when it *knows* the message did not leave (the transport refused it).

    Only then is a reminder retried; any other exception during a send counts as "maybe
    delivered" and the reminder is never sent again.
    """
