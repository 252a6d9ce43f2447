"""Trimming a text's edges in linear time, where a regex would backtrack over runs.

A pattern such as ``[\\s,.]+$`` searched over a text tries every position of a run and scans
the rest of the run from each: quadratic on 50,000 spaces or dashes. These helpers walk in from
the ends once, so any run costs its length.
"""

from __future__ import annotations

from collections.abc import Iterable


def _drop(c: str, chars: str) -> bool:
    return c.isspace() or c in chars


def strip_edges(text: str, lead: str, trail: str | None = None) -> str:
    """``text`` without leading whitespace or ``lead`` characters, nor trailing whitespace or
    ``trail`` characters (``trail`` defaults to ``lead``)."""
    trail = lead if trail is None else trail
    start, end = 0, len(text)
    while start < end and _drop(text[start], lead):
        start += 1
    while end > start and _drop(text[end - 1], trail):
        end -= 1
    return text[start:end]


def end_before(text: str, pos: int, chars: str = "") -> int:
    """Where the text before ``pos`` ends once its trailing whitespace (and ``chars``) is
    dropped."""
    while pos > 0 and _drop(text[pos - 1], chars):
        pos -= 1
    return pos


def strip_tail_words(text: str, words: Iterable[str], punct: str) -> str:
    """``text`` without trailing whitespace, ``punct`` and any of ``words`` (any case), as
    often as they repeat ("ok thanks!! please~" -> "ok")."""
    ordered = sorted({w.lower() for w in words}, key=len, reverse=True)
    longest = max((len(w) for w in ordered), default=0)
    end = len(text)
    while True:
        end = end_before(text, end, punct)
        tail = text[max(0, end - longest) : end].lower()
        word = next((w for w in ordered if tail.endswith(w)), None)
        if word is None:
            return text[:end]
        end -= len(word)
