"""What PCAI says to a person: one catalogue per language (``zh``, ``en``) and how to say it.

The catalogue lives in ``agent/`` because both edges speak it and the imports flow
``bot -> agent -> {memory, history}``: the agent's replies and notices and the bot's commands,
buttons and CLI lines all import it, while ``memory/`` and ``history/`` raise codes and fields
(their ``errors`` modules) and never hold a sentence. A key is a sentence in every language;
``{field}`` placeholders (``str.format``) are filled by the caller.

A line meant for a reader whose language is unknown (a notice queued away from a chat, a
terminal) says both, :func:`both`.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent.texts import en, zh
from history.errors import HistoryError
from memory.errors import MemoryStoreError, SensitiveDataError

# What the memory and history packages raise: a code and the fields to fill its sentence.
CodedError = MemoryStoreError | HistoryError

LANGUAGES = ("zh", "en")
CATALOGUES: Mapping[str, Mapping[str, str]] = {"zh": zh.TEXTS, "en": en.TEXTS}


def say(key: str, lang: str, **fields: object) -> str:
    """The sentence ``key`` in ``lang`` ("zh"; anything else is English), fields filled in."""
    return CATALOGUES["zh" if lang == "zh" else "en"][key].format(**fields)


def both(key: str, *, first: str = "zh", **fields: object) -> str:
    """The sentence in both languages, ``first`` first, one space between."""
    second = "en" if first == "zh" else "zh"
    return f"{say(key, first, **fields)} {say(key, second, **fields)}"


def error_text(exc: CodedError, lang: str, **extra: object) -> str:
    """What to tell a person about ``exc``: its code's sentence, its fields filled in.

    ``extra`` adds what only the edge knows (the file's name as its owner knows it).
    """
    fields = {**exc.fields, **extra}
    if isinstance(exc, SensitiveDataError):  # the kinds found, named in the reader's language
        fields["what"] = say("list_sep", lang).join(say(f"secret_{k}", lang) for k in exc.kinds)
    return say(exc.code, lang, **fields)


def error_both(exc: CodedError, **extra: object) -> str:
    """:func:`error_text` in Chinese, then in English (the form refusals always had)."""
    return f"{error_text(exc, 'zh', **extra)} {error_text(exc, 'en', **extra)}"


def conflict_note(shown: str) -> str:
    """The "add or replace?" line under a proposal with similar memories (``shown``)."""
    return both("conflict", first="en", shown=shown) if shown else ""
