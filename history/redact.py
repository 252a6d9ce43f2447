"""Redaction of forgotten text: every *copy* of a forgotten memory becomes ``[forgotten]``.

Forget removes the memory and the copies of it, and nothing else. A :class:`Redactor` is
built from the forgotten texts (the memory's text and summary, and the message it came from)
and judges one unit at a time (a log record, a session message, a summary block, a keyword, a
database row). In a unit, a *copy* is:

- one of the forgotten texts, whole (spacing and case aside): that stretch is blanked;
- a sentence (or line) that near-duplicates one: it holds at least 85% of the forgotten
  text's words (English words and numbers, Chinese characters; function words aside; each
  counted by its length) and those words make at least half of its own. The sentence is
  blanked, its bullet or label ("- 摘要：", "Keywords:") and end stay. A sentence that
  matches a memory the user keeps at least as well, or a stretch inside a kept memory's
  text, is that memory's, not a copy;
- a clipped sentence ("I drink oolong tea ev…") whose start, 12 characters or more, is a piece
  of a forgotten text;
- in a summary's keyword line ("- 關鍵字：a、b", the index of its block), a keyword a forgotten
  text holds, once no sentence left in the block names it (a keyword line on its own: any).

The message a memory came from is blanked whole, by its id. Nothing else is touched: a
question about the memory ("我每天早上喝什麼？"), a word it shares ("when is Anna's birthday?")
or a paraphrase holding less of it stays exactly as it was.

Every change is noted in a :class:`Journal` (place, unit, before, after), which ``/undo``
plays backwards: a unit still as forget left it gets its old text back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from history import extractive as ex
from history.sessions import Session
from memory.base.fsutil import atomic_write_text, read_text
from memory.base.guards import FORGOTTEN
from memory.base.logs import format_record, parse_log

MIN_TEXT_CHARS = 4  # shorter texts ("OK.") are too common to look for
NEAR_COVER, NEAR_SHARE = 0.85, 0.5  # a near-duplicate: most of the text, half of the sentence
MIN_CLIPPED_CHARS = 12
_TOKEN = re.compile(r"[A-Za-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FUNCTION_WORDS = ex._EN_STOPWORDS | frozenset(
    re.findall(
        r"\S+", "a an i is am are my me to of in on at it be we he she do so or as by up no s t m"
    )
)
# A sentence ends at these (kept with it); "…" ends a clipped one.
_END = re.compile(r"[。！？!?；;]+|\n+|\.(?=\s|$)|…")
# What a sentence may start with and keep: indentation, a bullet, a short label.
_LEAD = re.compile(r"\s*(?:[-*•>]\s+)?(?:\*\*[^*\n]{1,20}\*\*\s*|[^\s:：]{1,20}[:：]\s*)?")
_TAIL = " \t\r\n。！？!?；;.…\"'”’)）*"  # what a sentence may end with and keep
_NORM = re.compile(r"[\W_]+")
# A summary's keyword line: "- 關鍵字：a、b" (idle summaries), "Keywords: a, b".
_KEYWORD_LINE = re.compile(
    r"(?m)^([ \t]*(?:[-*][ \t]*)?(?:關鍵字|[Kk]eywords?)[ \t]*[:：][ \t]*)(.*)$"
)
_KEYWORD_SEP = re.compile(r"[ \t]*[、,，][ \t]*")


def _spaced(text: str) -> str:
    """A pattern for ``text`` that allows any whitespace where it has some."""
    return r"\s+".join(re.escape(part) for part in text.split())


def _long_enough(text: str) -> bool:
    return len("".join(text.split())) >= MIN_TEXT_CHARS


def _norm(text: str) -> str:
    return _NORM.sub("", text.lower())


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def words(text: str) -> set[str]:
    """The words a near-duplicate is judged by: English words and numbers (a plural's ``s``
    aside), Chinese characters; function words and characters left out."""
    out = set()
    for token in _TOKEN.findall(text):
        low = token.lower()
        if low not in _FUNCTION_WORDS and low not in ex._CJK_STOP_CHARS:
            out.add(_stem(low))
    return out


def _weight(found: set[str]) -> int:
    return sum(len(w) for w in found)


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, its end mark included."""
    spans, start = [], 0
    for m in _END.finditer(text):
        if m.end() > start:
            spans.append((start, m.end()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


class Redactor:
    """Blanks the copies of forgotten texts in a unit (see the module docstring)."""

    def __init__(self, texts: Iterable[str], kept: Iterable[str] = ()) -> None:
        self.texts = tuple(dict.fromkeys(t.strip() for t in texts if _long_enough(t)))
        self._whole = (
            re.compile("|".join(_spaced(t) for t in self.texts), re.I) if self.texts else None
        )
        self._words = [w for w in (words(t) for t in self.texts) if len(w) >= 2]
        self._norms = [_norm(t) for t in self.texts]
        # The memories the user keeps: their own copies are never a forgotten one's.
        kept = tuple(dict.fromkeys(k.strip() for k in kept if _long_enough(k)))
        self._kept = re.compile("|".join(_spaced(k) for k in kept), re.I) if kept else None
        self._kept_words = [w for w in (words(k) for k in kept) if w]

    def _keywords(self, text: str, line: re.Match[str], rest: str) -> str:
        """A keyword line without the words a forgotten text holds that ``rest`` does not name."""
        words = [w for w in _KEYWORD_SEP.split(line.group(2)) if w]
        left = [w for w in words if not self.names(w) or w.lower() in rest]
        if left == words:
            return text
        sep = "、" if "、" in line.group(2) else ", "
        return text.replace(line.group(0), line.group(1) + sep.join(left), 1)

    def names(self, word: str) -> bool:
        """Whether a forgotten text holds ``word`` (a whole word, for English)."""
        low = word.strip().lower()
        if not low:
            return False
        if not low.isascii():
            return any(low in t.lower() for t in self.texts)
        pattern = re.compile(rf"(?<![a-z0-9]){re.escape(low)}(?![a-z0-9])")
        return any(pattern.search(t.lower()) for t in self.texts)

    @staticmethod
    def _cover(mine: set[str], theirs: set[str]) -> float:
        """How much of ``theirs`` the sentence holds (0 when its own words are mostly other).

        Words count by their length, so a long English word weighs what several Chinese
        characters do: "stew uses quincewort (榅桲草)" without its gloss is still the text.
        """
        shared = _weight(mine & theirs)
        return shared / _weight(theirs) if shared >= NEAR_SHARE * _weight(mine) else 0.0

    def is_copy(self, sentence: str) -> bool:
        """Whether ``sentence`` near-duplicates a forgotten text, or is a clipped piece of one."""
        core = sentence.strip()
        if core.endswith("…"):
            piece = _norm(core[:-1])
            if len(piece) >= MIN_CLIPPED_CHARS and any(piece in n for n in self._norms):
                return True
        mine = words(core)
        if not mine:
            return False
        best = max((self._cover(mine, w) for w in self._words), default=0.0)
        kept = max((self._cover(mine, w) for w in self._kept_words), default=0.0)
        return best >= NEAR_COVER and best > kept

    def __call__(self, text: str) -> str:
        """``text`` with every copy replaced by ``[forgotten]``; anything else as it was.

        A summary's keyword line loses the keywords only the blanked copies named; a keyword
        line on its own (a chunk of a summary) those a forgotten text holds.
        """
        if self._whole is None or not text:
            return text
        line = _KEYWORD_LINE.fullmatch(text.strip())
        if line is not None:
            return self._keywords(text, line, "")
        new = self._blank(text)
        if new == text:
            return text
        rest = _KEYWORD_LINE.sub("", new).lower()
        return _KEYWORD_LINE.sub(lambda m: self._keywords(m.group(0), m, rest), new)

    def _blank(self, text: str) -> str:
        keep = [m.span() for m in self._kept.finditer(text)] if self._kept else []

        def blank(m: re.Match[str]) -> str:
            inside = any(a <= m.start() and m.end() <= b for a, b in keep)
            return m.group(0) if inside else FORGOTTEN

        if self._whole is not None:
            text = self._whole.sub(blank, text)
        out, last = [], 0
        for start, end in _sentences(text):
            sentence = text[start:end]
            if sentence.strip() == FORGOTTEN or not self.is_copy(sentence):
                continue
            lead = _LEAD.match(sentence)
            head = lead.end() if lead else 0
            stop = head + len(sentence[head:].rstrip(_TAIL))
            if stop <= head:
                continue
            out.append(text[last : start + head] + FORGOTTEN)
            last = start + stop
        return "".join(out) + text[last:] if out else text


@dataclass
class Journal:
    """What one forget changed, unit by unit: place -> unit key -> (before, after).

    ``/undo`` gives a unit its text back only while it still reads as forget left it: what
    changed since (a new message, a summary rewritten) is not overwritten.
    """

    changes: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)

    def note(self, place: str, key: str, before: str, after: str) -> None:
        """Record one unit's change (nothing when it did not change)."""
        if before != after:
            self.changes.setdefault(place, {})[key] = (before, after)

    def noter(self, place: str) -> Callable[[str, str, str], None]:
        """``note`` for one place (what a store's redaction calls)."""
        return lambda key, before, after: self.note(place, key, before, after)

    def at(self, place: str) -> dict[str, tuple[str, str]]:
        """The changes of one place."""
        return self.changes.get(place, {})

    def places(self, prefix: str) -> list[str]:
        """The places whose name starts with ``prefix``."""
        return [p for p in self.changes if p.startswith(prefix)]

    def to_json(self) -> dict[str, Any]:
        """Plain data for the undo copy."""
        return {p: {k: list(v) for k, v in units.items()} for p, units in self.changes.items()}

    @classmethod
    def from_json(cls, data: Any) -> Journal:
        """Read back what :meth:`to_json` wrote (anything else: an empty journal)."""
        if not isinstance(data, dict):
            return cls()
        return cls(
            {
                str(p): {str(k): (str(v[0]), str(v[1])) for k, v in units.items()}
                for p, units in data.items()
                if isinstance(units, dict)
            }
        )


def put_back(changes: dict[str, tuple[str, str]], key: str, text: str) -> str:
    """A unit's old text, if forget changed it and it still reads as forget left it."""
    change = changes.get(key)
    return change[0] if change is not None and change[1] == text else text


def _keyed(keys: Iterable[str]) -> list[str]:
    """Unique keys: a repeated one gets ``#2``, ``#3`` ... in order."""
    seen: dict[str, int] = {}
    out = []
    for k in keys:
        seen[k] = seen.get(k, 0) + 1
        out.append(f"{k} #{seen[k]}")
    return out


def edit_log(day: str, text: str, edit: Callable[[str, str, str], str]) -> str:
    """A daily log with each record's text replaced by ``edit(key, ref, text)``."""
    lines = text.splitlines()  # numbered as parse_log numbers them
    records = parse_log(day, text)
    keys = _keyed(f"{r.timestamp} {r.who} {r.ref}" for r in records)
    changed = False
    for rec, key in reversed(list(zip(records, keys, strict=True))):
        body = edit(key, rec.ref, rec.text)
        if body == rec.text:
            continue
        when = datetime.fromisoformat(rec.timestamp)
        record = format_record(when, rec.who, body, rec.ref).rstrip("\n").split("\n")
        lines[rec.line_start - 1 : rec.line_end] = record
        changed = True
    if not changed:
        return text
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def redact_log(
    day: str,
    text: str,
    redact: Callable[[str], str],
    refs: frozenset[str],
    journal: Journal | None = None,
) -> str:
    """One daily log with each record redacted, and the records named by ``refs`` blanked."""

    def edit(key: str, ref: str, body: str) -> str:
        new = FORGOTTEN if ref and ref in refs else redact(body)
        if journal is not None:
            journal.note(f"log:{day}", key, body, new)
        return new

    return edit_log(day, text, edit)


def restore_log(day: str, text: str, journal: Journal) -> str:
    """One daily log with the records forget changed put back (``/undo``)."""
    changes = journal.at(f"log:{day}")
    return edit_log(day, text, lambda key, _ref, body: put_back(changes, key, body))


def said_in_log(day: str, text: str, refs: frozenset[str]) -> list[str]:
    """The texts of the records named by ``refs`` (the messages memories came from)."""
    return [rec.text for rec in parse_log(day, text) if rec.ref and rec.ref in refs]


def _edit_blocks(path: Path, edit: Callable[[str, str], str]) -> bool:
    text = read_text(path)
    if not text:
        return False
    blocks = re.split(r"(?m)^(?=## )", text)
    keys = _keyed(block.split("\n", 1)[0] for block in blocks)
    new = "".join(edit(key, block) for key, block in zip(keys, blocks, strict=True))
    if new == text:
        return False
    atomic_write_text(path, new)
    return True


def redact_summaries(
    path: Path, redact: Callable[[str], str], journal: Journal | None = None
) -> bool:
    """Redact a summary file block by block (``##`` headings); True when it changed."""

    def edit(key: str, block: str) -> str:
        new = redact(block)
        if journal is not None:
            journal.note(f"summary:{path.name}", key, block, new)
        return new

    return _edit_blocks(path, edit)


def restore_summaries(path: Path, journal: Journal) -> bool:
    """Put back the blocks of a summary file that forget changed (``/undo``)."""
    changes = journal.at(f"summary:{path.name}")
    return bool(changes) and _edit_blocks(path, lambda key, b: put_back(changes, key, b))


def _message_keys(session: Session) -> list[str]:
    return _keyed(f"{m.role} {m.time.isoformat()} {m.id}" for m in session.messages)


def redact_session(
    session: Session,
    redact: Callable[[str], str],
    ids: frozenset[str],
    journal: Journal | None = None,
) -> bool:
    """Redact a session in place (content and summary), blanking messages named by ``ids``."""
    changed = False
    for i, (m, key) in enumerate(zip(session.messages, _message_keys(session), strict=True)):
        if m.id and m.id in ids:
            new = replace(m, content=FORGOTTEN, summary="")
        else:
            new = replace(m, content=redact(m.content), summary=redact(m.summary))
        if new != m:
            session.messages[i] = new
            changed = True
            if journal is not None:
                journal.note("session", key, m.content, new.content)
                journal.note("session.summary", key, m.summary, new.summary)
    return changed


def restore_session(session: Session, journal: Journal) -> bool:
    """Put back the messages forget changed, in place (``/undo``)."""
    content, summary = journal.at("session"), journal.at("session.summary")
    changed = False
    for i, (m, key) in enumerate(zip(session.messages, _message_keys(session), strict=True)):
        new = replace(
            m, content=put_back(content, key, m.content), summary=put_back(summary, key, m.summary)
        )
        if new != m:
            session.messages[i] = new
            changed = True
    return changed
