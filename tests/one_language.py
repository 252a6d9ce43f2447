"""What a line says in the bot's own words, and whether those are all in one language.

Used by the tests of "one language per person" (issue 23, item 5): what a person wrote or
stored is taken out of a line first, and so are the names every reader sees as they are
(commands, ids, PCAI, Ollama, Markdown, zone names); the rest must be in the reader's language:
no Chinese character for an English reader, no English word for a Chinese reader.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Chinese characters, CJK punctuation and full-width forms: any of them is Chinese text.
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff01-\uff5e]")
_WORD = re.compile(r"[A-Za-z]{2,}")
# What every reader sees as it is, in either language.
_NAMES = re.compile(
    r"`[^`]*`"  # a shell command
    r"|https?://\S+"
    r"|/[a-z_]+(?: (?:off|now|cancel|confirm|discard|offer|done|snooze|\d+)\b)*"  # a command
    r"|<id>|\[id\]|\b[mp]-[0-9a-z-]+"  # ids
    r"|\b(?:project|lang):\S*|\bglobal\b"  # scopes
    r"|\b[A-Z][a-z]+/[A-Za-z_]+\b"  # a time zone
    r"|\b(?:PCAI(?:_[A-Z_]+)?|Ollama|Markdown|MEMORY(?:_FULL)?\.md|UTF-8|Ctrl-[CD]|zh|en|id)\b"
    r"|\b(?:README|JSON|Telegram|API|PIN|SQLite|sqlite-vec|pcai\.db|MB)\b"  # names
    r"|\bpcai [a-z-]+(?: --?[a-z]+)*|\bpip install -e"  # a shell command, unquoted
    r"|\b[a-z]+_[a-z_]+\b"  # a field's name (memory_class)
    r"|\[forgotten\]"  # the marker forget leaves in the files
)
# /start tells a reader how to switch: the other language's name, in that language.
_SWITCH = ("(中文：/lang zh)", "（English: /lang en）")


def own_words(line: str, quoted: Iterable[str]) -> str:
    """What of ``line`` the bot says in its own words: the person's texts and names taken out."""
    for text in sorted(quoted, key=len, reverse=True):
        line = line.replace(text, " ")
    for hint in _SWITCH:
        line = line.replace(hint, " ")
    return _NAMES.sub(" ", line)


def wrong_language(lang: str, said: str, quoted: Iterable[str] = ()) -> list[str]:
    """The lines of ``said`` whose own words are not all in ``lang``."""
    bad = []
    for line in said.splitlines():
        words = own_words(line, quoted)
        other = _WORD.findall(words) if lang == "zh" else _CJK.findall(words)
        if other:
            bad.append(f"{line!r}: {other}")
    return bad
