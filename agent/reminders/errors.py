"""The reminder package's exceptions: codes and fields inside, one zh + en sentence at the edge."""

from __future__ import annotations

from agent.errors import AgentError


class ReminderError(AgentError):
    """Base class of every error the reminder package raises on purpose.

    ``zh`` and ``en`` are the sentence the bot shows; ``str(error)`` joins them.
    """

    def __init__(self, en: str, zh: str) -> None:
        super().__init__(f"{en} {zh}")
        self.en = en
        self.zh = zh


# -- parsing ---------------------------------------------------------------------------------
class ParseError(ReminderError):
    """A ``/remind`` phrase the parser cannot turn into a time and a text.

    ``code`` is one of ``no_time``, ``no_text``, ``bad_date``, ``bad_time``, ``past``,
    ``conflict``.
    """

    def __init__(self, code: str, en: str, zh: str) -> None:
        super().__init__(en, zh)
        self.code = code


def parse_error(code: str, **values: object) -> ParseError:
    """The :class:`ParseError` of ``code`` with its two sentences filled in."""
    sentences = {
        "no_time": (
            "I could not find a time in that. Try: /remind tomorrow 9am call mom",
            "我看不出時間。試試：/remind 明天早上九點 打電話給媽媽",
        ),
        "no_text": (
            "What should I remind you of? Put it after the time.",
            "要提醒你什麼？請在時間後面寫上內容。",
        ),
        "bad_date": ("{what} is not a date on the calendar.", "{what} 不是有效的日期。"),
        "bad_time": ("{what} is not a time of day.", "{what} 不是有效的時間。"),
        "past": ("{what} has already passed.", "{what} 已經過去了。"),
        "conflict": (
            "That names two different times; give one.",
            "時間的說法互相衝突，請只給一個時間。",
        ),
        "bad_number": ("{what} is not a number I can read.", "{what} 不是我看得懂的數字。"),
        "too_far": (
            "That is too far ahead: a reminder can be at most 100 years away.",
            "時間太遠了：提醒最多只能設在 100 年內。",
        ),
        "too_long": (
            "That reminder is too long (at most 500 characters).",
            "提醒內容太長了（最多 500 字）。",
        ),
    }
    en, zh = sentences[code]
    return ParseError(code, en.format(**values), zh.format(**values))


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
