"""Whether the model's context holds a turn: checked when the bot starts and by ``pcai doctor``.

A turn needs the rules, the tool schemas, a reasonable message and the reply's room
(``PCAI_REPLY_TOKENS``, sent as ``max_tokens``) in the context
(:func:`agent.context_fit.context_needed`). A server whose context is smaller (a llama-server
started with ``-c 256``) would get every message cut to nothing, so the bot refuses to start
on it, and the doctor fails, with the same one line saying what to set.
"""

from __future__ import annotations

import math

from agent.context_fit import MARGIN, context_needed, turn_floor
from agent.tools import SCHEMAS
from bot.errors import BotError
from bot.model_backends import model_backend
from bot.settings import Settings
from memory.base.tokens import TokenCounter

MIN_REPLY_TOKENS = 64  # the least PCAI_REPLY_TOKENS the settings take


class ContextTooSmallError(BotError, ValueError):
    """The model's context cannot hold the rules, the tools, a message and the reply."""


def needed_context(settings: Settings, counter: TokenCounter) -> int:
    """The least context a turn fits in with the settings' reply room."""
    return context_needed(counter, settings.reply_tokens, list(SCHEMAS.values()))


def context_shortfall(settings: Settings, context: int, counter: TokenCounter) -> str | None:
    """One line saying what to set when ``context`` tokens cannot hold a turn, else None."""
    needed = needed_context(settings, counter)
    if context >= needed:
        return None
    bigger = max(4096, 1 << (needed - 1).bit_length())  # the next power of two, 4096 at least
    if settings.context_tokens:
        said, fix = f"PCAI_CONTEXT_TOKENS is {context}", f"set PCAI_CONTEXT_TOKENS={bigger}"
    else:  # what the server was started with, or what the model takes: the backend's words
        said, fix = model_backend(settings).too_small(settings, context, bigger)
    reply = _reply_that_fits(settings, context, counter)
    if reply is not None:
        fix += f", or set PCAI_REPLY_TOKENS={reply} or lower"
    return (
        f"{said}; PCAI needs at least {needed} (the rules, the tools, a message and "
        f"{settings.reply_tokens} for the reply): {fix}"
    )


def _reply_that_fits(settings: Settings, context: int, counter: TokenCounter) -> int | None:
    """The largest reply room that ``context`` holds with the rest, None below the least."""
    schemas = list(SCHEMAS.values())
    reply = math.floor(context * (1 - MARGIN)) - turn_floor(counter, schemas)
    while reply >= MIN_REPLY_TOKENS and context_needed(counter, reply, schemas) > context:
        reply -= 1  # float rounding at the edge
    return reply if reply >= MIN_REPLY_TOKENS else None


def refuse_small_context(settings: Settings, context: int, counter: TokenCounter) -> None:
    """Raise :class:`ContextTooSmallError` (its line says what to set) when ``context`` tokens
    cannot hold a turn: the bot does not start on such a server."""
    line = context_shortfall(settings, context, counter)
    if line is not None:
        raise ContextTooSmallError(line)
