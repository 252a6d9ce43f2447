"""Redaction of forgotten text from logs, summaries and sessions: ``[forgotten]`` stays instead.

What a forgotten memory said can sit in many places, copied whole (the log, the session, a
reply quoting it) or in pieces (a summary's sentence, its keywords, a clipped extract). A
:class:`Redactor` is built from the forgotten texts and judges one unit at a time (a log
record, a session message, a summary block, a database row):

- a unit *touches* the forgotten memory when it holds one of the texts whole (spacing and
  case aside), one long distinctive word (8+ letters, or three Chinese characters in a row:
  rarely shared by chance) or two shorter ones. The distinctive words are those of
  :func:`words_of` that no memory the user keeps uses;
- in a touched unit the whole texts, their sentences that hold a distinctive word, the
  distinctive words themselves and clipped pieces of them ("quince…") become ``[forgotten]``;
- a unit that does not touch it is left exactly as it was.

The message a memory came from is blanked whole, by its id. What a model paraphrased beyond
these rules (other words, no distinctive word) cannot be recognised and stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from history import extractive as ex
from history.sessions import Session
from memory.base.fsutil import atomic_write_text, read_text
from memory.base.guards import FORGOTTEN
from memory.base.logs import format_record, parse_log

MIN_TEXT_CHARS = 4  # shorter texts and sentences ("OK.") are too common to look for
LONG_ASCII, LONG_CJK = 8, 3  # a distinctive word this long touches a unit on its own
_CLIPPED = re.compile(r"(?<![\w'-])([\w'-]{3,})…")  # from the run's start: linear
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_HAN_STOPS = re.compile("[" + "".join(sorted(ex._CJK_STOP_CHARS)) + "]")


def _spaced(text: str) -> str:
    """A pattern for ``text`` that allows any whitespace where it has some."""
    return r"\s+".join(re.escape(part) for part in text.split())


def _word(term: str) -> str:
    # An English word must stand alone ("tea" is not in "steam"); Chinese has no spaces.
    word = re.escape(term)
    return rf"(?<![A-Za-z0-9]){word}(?![A-Za-z0-9])" if term.isascii() else word


def _long_enough(text: str) -> bool:
    return len("".join(text.split())) >= MIN_TEXT_CHARS


def _strong(term: str) -> bool:
    return len(term) >= (LONG_ASCII if term.isascii() else LONG_CJK)


def words_of(text: str) -> list[str]:
    """The words of ``text`` a redaction looks for, lower case.

    English: the summaries' keywords (three letters or more, no stopwords). Chinese has no
    spaces: a two-character word between function characters (的, 了, 過 ...), and every three
    characters in a row with at least two that are not function characters (花生過敏 gives
    花生, 對花生, 花生過, 生過敏; a name like 榅桲草 inside a sentence is found this way).
    """
    out = [t.lower() for t in ex.terms(text) if t.isascii()]
    for run in _HAN.findall(text):
        out += [s for s in _HAN_STOPS.split(run) if len(s) == 2 and s not in ex._CJK_STOPWORDS]
        for i in range(len(run) - 2):
            three = run[i : i + 3]
            if sum(ch not in ex._CJK_STOP_CHARS for ch in three) >= 2:
                out.append(three)
    return out


class Redactor:
    """Blanks forgotten texts in the units that touch them (see the module docstring)."""

    def __init__(self, texts: Iterable[str], kept: Iterable[str] = ()) -> None:
        self.texts = tuple(dict.fromkeys(t.strip() for t in texts if _long_enough(t)))
        kept_low = " ".join(kept).lower()
        found = [w for t in self.texts for w in words_of(t)]
        self.terms = tuple(
            w
            for w in dict.fromkeys(found)
            if w != "forgotten" and not re.search(_word(w), kept_low)
        )
        self.threshold = min(2, len(self.terms))
        self.strong = frozenset(t for t in self.terms if _strong(t))
        # Longest first inside a lookahead: every place a word starts is found, overlaps too.
        by_length = sorted(self.terms, key=len, reverse=True)
        self._terms = (
            re.compile("(?=(" + "|".join(map(_word, by_length)) + "))", re.I)
            if self.terms
            else None
        )
        sentences = [
            s
            for t in self.texts
            for s in ex.sentences(t)
            if _long_enough(s) and self._term_spans(s)
        ]
        needles = sorted(dict.fromkeys([*self.texts, *sentences]), key=len, reverse=True)
        self._whole = re.compile("|".join(_spaced(t) for t in self.texts), re.I)
        self._needles = re.compile("|".join(_spaced(n) for n in needles), re.I)

    def _term_spans(self, text: str) -> list[tuple[int, int, str]]:
        if self._terms is None:
            return []
        return [
            (m.start(), m.start() + len(m.group(1)), m.group(1))
            for m in self._terms.finditer(text)
        ]

    def touches(self, text: str) -> bool:
        """Whether ``text`` holds a forgotten text whole or enough of its distinctive words."""
        if not self.texts or not text:
            return False
        if self._whole.search(text):
            return True
        hits = {word.lower() for _, _, word in self._term_spans(text)}
        return bool(hits) and (len(hits) >= self.threshold or bool(hits & self.strong))

    def __call__(self, text: str) -> str:
        """``text`` with the forgotten parts replaced by ``[forgotten]`` (if it touches them)."""
        if not self.touches(text):
            return text
        text = self._needles.sub(FORGOTTEN, text)
        text = _CLIPPED.sub(self._unclip, text)
        spans: list[list[int]] = []
        for start, end, _ in self._term_spans(text):
            if spans and start <= spans[-1][1]:  # overlapping or touching: one marker
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        for start, end in reversed(spans):
            text = text[:start] + FORGOTTEN + text[end:]
        return text

    def _unclip(self, m: re.Match[str]) -> str:
        piece = m.group(1).lower()
        return FORGOTTEN if any(t.startswith(piece) for t in self.terms) else m.group(0)


def redact_log(day: str, text: str, redact: Callable[[str], str], refs: frozenset[str]) -> str:
    """One daily log with each record redacted, and the records named by ``refs`` blanked."""
    lines = text.splitlines()  # numbered as parse_log numbers them
    changed = False
    for rec in reversed(parse_log(day, text)):
        body = FORGOTTEN if rec.ref and rec.ref in refs else redact(rec.text)
        if body == rec.text:
            continue
        when = datetime.fromisoformat(rec.timestamp)
        record = format_record(when, rec.who, body, rec.ref).rstrip("\n").split("\n")
        lines[rec.line_start - 1 : rec.line_end] = record
        changed = True
    if not changed:
        return text
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def said_in_log(day: str, text: str, refs: frozenset[str]) -> list[str]:
    """The texts of the records named by ``refs`` (the messages memories came from)."""
    return [rec.text for rec in parse_log(day, text) if rec.ref and rec.ref in refs]


def redact_summaries(path: Path, redact: Callable[[str], str]) -> bool:
    """Redact a summary file block by block (``##`` headings); True when it changed."""
    text = read_text(path)
    if not text:
        return False
    blocks = re.split(r"(?m)^(?=## )", text)
    new = "".join(redact(block) for block in blocks)
    if new == text:
        return False
    atomic_write_text(path, new)
    return True


def redact_session(session: Session, redact: Callable[[str], str], ids: frozenset[str]) -> bool:
    """Redact a session in place (content and summary), blanking messages named by ``ids``."""
    changed = False
    for i, m in enumerate(session.messages):
        if m.id and m.id in ids:
            new = replace(m, content=FORGOTTEN, summary="")
        else:
            new = replace(m, content=redact(m.content), summary=redact(m.summary))
        if new != m:
            session.messages[i] = new
            changed = True
    return changed
