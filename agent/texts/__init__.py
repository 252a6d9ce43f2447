"""What PCAI says to a person: one catalogue per language (``zh``, ``en``) and how to say it.

The catalogue lives in ``agent/`` because both edges speak it and the imports flow
``bot -> agent -> {memory, history}``: the agent's replies and notices and the bot's commands,
buttons and CLI lines all import it, while ``memory/`` and ``history/`` raise codes and fields
(their ``errors`` modules) and never hold a sentence. A key is a sentence in every language;
``{field}`` placeholders (``str.format``) are filled by the caller.

The memory page's words are each catalogue's ``PAGE`` (read raw by bot/web/i18n.py), and no
other module compares a language code (``catalogue_language`` is the one choice).

Every line goes to one person in their one language (bot/frontdesk/language.py has the rule,
which ends in English when nothing is known): no line says both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from agent.texts import en, zh
from history.errors import HistoryError
from memory.errors import MemoryStoreError, SensitiveDataError

# What the memory and history packages raise: a code and the fields to fill its sentence.
CodedError = MemoryStoreError | HistoryError

LANGUAGES = ("zh", "en")
CATALOGUES: Mapping[str, Mapping[str, str]] = {"zh": zh.TEXTS, "en": en.TEXTS}
# The memory page's words (bot/web/i18n.py reads them raw; its templates fill the fields).
PAGES: Mapping[str, Mapping[str, str]] = {"zh": zh.PAGE, "en": en.PAGE}


def catalogue_language(lang: str) -> str:
    """The catalogue ``lang`` reads: "zh" for "zh", English for anything else."""
    return "zh" if lang == "zh" else "en"


def say(key: str, lang: str, **fields: object) -> str:
    """The sentence ``key`` in ``lang`` ("zh"; anything else is English), fields filled in."""
    return CATALOGUES[catalogue_language(lang)][key].format(**fields)


def error_text(exc: CodedError, lang: str, **extra: object) -> str:
    """What to tell a person about ``exc``: its code's sentence, its fields filled in.

    ``extra`` adds what only the edge knows (the file's name as its owner knows it).
    """
    fields = {**exc.fields, **extra}
    if isinstance(exc, SensitiveDataError):  # the kinds found, named in the reader's language
        fields["what"] = say("list_sep", lang).join(say(f"secret_{k}", lang) for k in exc.kinds)
    return say(exc.code, lang, **fields)


LABEL_CHARS = 24  # of a memory's or reminder's text in a button's label (a phone's width)


def undo_label(what: str, lang: str) -> str:
    """An Undo button's label naming the act it takes back: "↩️ Undo remembering '…'"."""
    return say("undo_button", lang, what=what)


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis says it was cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip(" ,.;:，。、；：") + "…"


def conflict_note(shown: str, lang: str) -> str:
    """The "add or replace?" line under a proposal with similar memories (``shown``)."""
    return say("conflict", lang, shown=shown) if shown else ""


_DAY = re.compile(r"\((\d{4}-\d{2}-\d{2})\)")


def summary_name(heading: str, lang: str) -> str:
    """A summary's heading in MEMORY_FULL.md (``對話摘要 (2026-11-25)``, the file's fixed form)
    as the reader's language names it."""
    day = _DAY.search(heading)
    return say("summary_name", lang, day=day.group(1)) if day else heading
