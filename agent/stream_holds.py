"""Where a reply still being written is settled: what comes next cannot mask text before it.

A prefix of the reply may be shown only if it is a prefix of the final message, masked, for
every way the model may go on. The masker reads ahead, so a span can still become a secret
after it was written: a quoted value until its quote closes (any quote style the masker
knows), a bare value or a URL's ``user:password`` until the word ends, what follows a
keyword for ``KEYWORD_HOLD`` characters, a token before "is my password", a code until no
"from the bank" can follow within a sentence, and the start of a secret the person said in
this conversation, echoed without its keyword. :func:`settled` gives the first position
where such a span may start; nothing from there on is shown.

Where it can, the masker itself says which spans can still change: the tail is masked once
as it is and once with each continuation that would complete one of those secrets (a
password-like word, an ``@host``, a closing quote, a one-time context); wherever the
findings differ, the text is not settled. Only the tail is read (``WINDOW``): every rule
above reaches back less far.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory.base.guards import REDACTED, scan
from memory.base.secret_phrases import (
    QUOTES,  # the masker's own quote pairs, kept in step
    keyword_spans,
)

WINDOW = 600  # characters of the tail the continuations are tried on
# All the masker reads after a keyword is this near: separators, a qualifier, a value, a code's
# "from the bank". Text closer than that to a keyword waits, whatever the continuations say.
KEYWORD_HOLD = 128
_KEYWORD_CHARS = 40  # longer than any keyword
QUOTE_REACH = 130  # a quoted value closes within 128 characters or is read as a bare word
# A token said before its keyword ("hunter22 is my password"): the masker looks 72 characters
# back from the keyword, which may still be coming (the longest is 22 characters).
BEFORE_REACH = 100
# Continuations that would complete a secret: a password-like tail for the word being
# written, ending a URL's user:password; a one-time code's context.
_VALUE = "Qz7xK9w"
_GOES_ON = (_VALUE + "@h.io", " from the bank")
_SAID_BEFORE = " is my password"
# A character of a word: not a space, nor a CJK letter (those scripts put no spaces between
# words, so a CJK letter ends a word) or a CJK punctuation mark.
_WORD_CHAR = r"[^\s\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
WORD_CHAR = re.compile(_WORD_CHAR)
_LAST_WORD = re.compile(rf"{_WORD_CHAR}+\Z")
_CANDIDATE = re.compile(
    r"(?<![!-~])(?:[!-~]{4,40}|\d{1,8}(?:[ .\-\u00a0]\d{1,8}){1,7})(?![!-~])"  # or "1 2 3 4"
)
_DIGIT = re.compile(r"\d")
_DIGITS_TAIL = re.compile(r"[\d \t.\-/\u00a0\u3000]{1,80}\Z")
_GROUPING = " .-/\u00a0\u3000"


def settled(text: str, known: Iterable[str] = ()) -> int:
    """The first position of ``text`` where a secret may still start (``len(text)``: none)."""
    cut = len(text)
    if word := _LAST_WORD.search(text):  # a word being written: its end is not known yet
        cut = word.start()
    return min(
        cut,
        _after_keyword(text),
        _changing(text),
        _said_before(text),
        _said_secrets(text, known),
    )


def _after_keyword(text: str) -> int:
    """The end of the first keyword fewer than ``KEYWORD_HOLD`` characters from the end."""
    at = max(0, len(text) - KEYWORD_HOLD - _KEYWORD_CHARS)
    for _, end in keyword_spans(text[at:]):
        if len(text) - (at + end) < KEYWORD_HOLD:
            return at + end
    return len(text)


def _changing(text: str) -> int:
    """Where the masker's findings in the tail differ once the text goes on (see module doc)."""
    at = max(0, len(text) - WINDOW)
    tail = text[at:]
    base = _spans(tail)
    near = tail[-QUOTE_REACH:]
    closers = {close for opening, close in QUOTES.items() if opening in near}
    cut = len(text)
    for more in (*_GOES_ON, *(_VALUE + close for close in sorted(closers))):
        for start, _ in base ^ _spans(tail + more):
            if start < len(tail):
                cut = min(cut, at + start)
    return cut


def _spans(text: str) -> set[tuple[int, int]]:
    return {(f.start, f.end) for f in scan(text)}


def _said_before(text: str) -> int:
    """The start of a recent token the masker would take for a secret if its keyword came."""
    at = max(0, len(text) - BEFORE_REACH)
    for m in _CANDIDATE.finditer(text, at):
        if _DIGIT.search(m[0]) and any(f.start == 0 for f in scan(m[0] + _SAID_BEFORE)):
            return m.start()  # the earliest one: nothing from there on is shown
    return len(text)


def _said_secrets(text: str, known: Iterable[str]) -> int:
    """The start of the tail that begins a secret the person said (it may be echoed whole)."""
    cut = len(text)
    for value in known:
        if len(value) < 3 or value == REDACTED:
            continue
        cut = min(cut, _begins(text, value), _begins_digits(text, value))
    return cut


def _begins(text: str, value: str) -> int:
    """Where the longest end of ``text`` that starts ``value`` begins, at a word's start."""
    for size in range(min(len(value), len(text)), 0, -1):
        start = len(text) - size
        if text.endswith(value[:size]) and not _glued(text, start):
            return start
    return len(text)


def _begins_digits(text: str, value: str) -> int:
    """The same for a number the masker matches in any grouping ("1 2 3 4" is "1234")."""
    digits = [c for c in value if c.isdigit()]
    if len(digits) < 4 or not all(c.isdigit() or c in _GROUPING for c in value):
        return len(text)
    tail = _DIGITS_TAIL.search(text)
    if tail is None:
        return len(text)
    wanted = "".join(digits)
    for start in range(tail.start(), len(text)):
        said = "".join(c for c in text[start:] if c.isdigit())
        if text[start].isdigit() and wanted.startswith(said) and not _glued(text, start):
            return start
    return len(text)


def _glued(text: str, start: int) -> bool:
    """Whether a match at ``start`` runs on from a letter or digit (the masker skips it)."""
    before = text[start - 1 : start]
    return bool(before) and before.isascii() and before.isalnum()
