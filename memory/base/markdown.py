"""MEMORY.md: parse into entries and write back, keeping governance fields readable.

The format a person reads and edits::

    # MEMORY

    ## 偏好

    - 我喜歡喝咖啡，不加糖
      - id: m-20261122-7f3a2c
      - created: 2026-11-22T10:00:00+08:00
      - topic: food:coffee
      - weight: 7

Sections are the ``##`` headings. One line before them may hold the keyword index
(keywords of the conversation summaries, added by compaction; docs/data-layout.md)::

    Keywords: 咖啡, 部署, PostgreSQL

(Files written before the label was one language say ``關鍵字 Keywords:``; that reads too.)
An entry is a top-level bullet; its text may
continue on lines indented by two spaces; its governance fields follow as
indented ``- key: value`` lines, written only when they differ from the default. A bullet a
person adds by hand, with no fields, is a valid entry: it gets a stable id from its text.
Lines that are neither (a paragraph, a quote) are kept as notes of their section and written
back at the top of it, so rewriting the file never loses what a person typed.

Content never passes for structure: :func:`render_memory` and :func:`parse_memory` are the
one codec every write and read of MEMORY.md goes through, and ``parse(render(d)) == d``
for any text, section and field value. A text line that looks like a field or a heading
is written with a Markdown backslash (``  \\- weight: 72``, ``  \\# title``); line
separators, control characters and blank ends are written as ``&#x2028;``-style references
(:mod:`memory.base.escaping`); a section or field value is always one line. A note before the
first section that reads like the keyword line is written with a backslash too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from enum import StrEnum

from memory.base.escaping import (
    escape,
    escape_heading,
    escape_text_lines,
    read_heading,
    split_lines,
    unescape,
    unescape_text_line,
)

DEFAULT_SECTION = "General"


class MemoryStatus(StrEnum):
    """An entry's status; a value a person wrote outside these is kept as written."""

    ACTIVE = "active"
    DEPRECATED = "deprecated"
    LOW_PRIORITY = "low_priority"
    ARCHIVED = "archived"


class MemoryClass(StrEnum):
    """What kind of memory an entry is: a rule, an event, or both."""

    POLICY = "policy"
    EPISODIC = "episodic"
    MIXED = "mixed"


class Enforcement(StrEnum):
    """How strictly a policy memory binds the answer."""

    SOFT = "soft"
    HARD = "hard"


MEMORY_CLASSES = tuple(MemoryClass)
STATUSES = tuple(MemoryStatus)
ENFORCEMENT_LEVELS = tuple(Enforcement)
SUMMARY_MAX_CHARS = 50

_FIELD_LINE = re.compile(r"^  - ([a-z_]+):\s?(.*)$")
_BULLET = re.compile(r"^[-*] (.*)$")
# Text lines that would read as a field or a heading, or start with a backslash escape.
# English like the file's other labels (``# MEMORY``, ``- id:``); files written before it say
# "關鍵字 Keywords:", which is still read (and written back in the one-language form).
KEYWORDS_LABEL = "Keywords:"
_ANY_KEYWORDS_LABEL = r"(?:關鍵字 )?Keywords:"
# The keyword line, and notes that read like it (with one more backslash each on render).
_KEYWORDS_LINE = re.compile(rf"^{_ANY_KEYWORDS_LABEL}\s?(.*)$")
_KEYWORDS_LOOKALIKE = re.compile(rf"^\\*{_ANY_KEYWORDS_LABEL}")


@dataclass(frozen=True, slots=True)
class Entry:
    """One long-term memory with its governance fields (docs/data-layout.md, "MEMORY.md")."""

    id: str
    text: str
    section: str = DEFAULT_SECTION
    summary: str = ""
    memory_class: str = MemoryClass.EPISODIC  # str: a hand-written value is kept as it is
    scope: str = "global"
    canonical_topic: str = ""
    supersedes: tuple[str, ...] = ()
    status: str = MemoryStatus.ACTIVE
    claims: tuple[str, ...] = ()
    is_core: bool = False
    enforcement_level: str = Enforcement.SOFT
    user_weight: int = 5
    importance: float = 0.7
    created_at: str = ""
    status_changed_at: str = ""
    # When the user last kept or restored it: the health's recency counts from here on.
    refreshed_at: str = ""
    history: tuple[str, ...] = field(default=())

    def content_hash(self) -> str:
        """Hash of everything that shapes how this entry is indexed and ranked."""
        parts = [
            self.text,
            self.section,
            self.summary,
            self.status,
            self.scope,
            self.canonical_topic,
            str(self.importance),
            str(self.user_weight),
            str(self.is_core),
            self.created_at,
        ]
        return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()


# Markdown key -> Entry attribute. Order is the order fields are written in.
_KEYS: dict[str, str] = {
    "id": "id",
    "created": "created_at",
    "summary": "summary",
    "class": "memory_class",
    "scope": "scope",
    "topic": "canonical_topic",
    "supersedes": "supersedes",
    "status": "status",
    "status_changed": "status_changed_at",
    "refreshed": "refreshed_at",
    "claims": "claims",
    "core": "is_core",
    "enforcement": "enforcement_level",
    "weight": "user_weight",
    "importance": "importance",
    "history": "history",
}
_ATTR_TO_KEY = {v: k for k, v in _KEYS.items()}
_LIST_SEP = {"supersedes": ", ", "claims": " | "}


def derived_id(text: str) -> str:
    """A stable id for an entry a person wrote without one."""
    return "h-" + hashlib.sha1(text.strip().encode("utf-8")).hexdigest()[:10]


def new_entry_id(now: datetime, text: str) -> str:
    """A fresh id: the creation date plus 8 hex digits, the form a confirmed proposal's id has."""
    digest = hashlib.sha1(f"{now.isoformat()}|{text}".encode()).hexdigest()[:8]
    return f"m-{now:%Y%m%d}-{digest}"


@dataclass(frozen=True, slots=True)
class MemoryDocument:
    """A parsed MEMORY.md: the title line, the section order and the entries."""

    title: str = "# MEMORY"
    sections: tuple[str, ...] = ()
    entries: tuple[Entry, ...] = ()
    # (section, line) for lines that are not entries; section "" is the text before any heading.
    notes: tuple[tuple[str, str], ...] = ()
    # The keyword index: words of the conversation summaries, oldest first.
    keywords: tuple[str, ...] = ()

    def by_id(self) -> dict[str, Entry]:
        """Entries keyed by id."""
        return {e.id: e for e in self.entries}

    def with_entry(self, entry: Entry) -> MemoryDocument:
        """Return a copy with ``entry`` added, or replacing the entry with its id."""
        entries = list(self.entries)
        for i, old in enumerate(entries):
            if old.id == entry.id:
                entries[i] = entry
                break
        else:
            entries.append(entry)
        sections = self.sections
        if entry.section not in sections:
            sections = (*sections, entry.section)
        return replace(self, sections=sections, entries=tuple(entries))

    def without(self, entry_id: str) -> MemoryDocument:
        """Return a copy without the entry ``entry_id``."""
        return replace(self, entries=tuple(e for e in self.entries if e.id != entry_id))

    def with_keywords(self, words: Iterable[str], limit: int = 200) -> MemoryDocument:
        """Return a copy whose keyword index also holds ``words`` (new ones only, the newest
        ``limit`` kept); each word is one stripped line, compared case-insensitively."""
        known = {k.lower() for k in self.keywords}
        added = list(self.keywords)
        for word in words:
            word = " ".join(word.split())
            if word and word.lower() not in known:
                known.add(word.lower())
                added.append(word)
        return replace(self, keywords=tuple(added[-limit:]) if limit > 0 else ())


def _coerce(attr: str, raw: str) -> object:
    raw = raw.strip()
    if attr in _LIST_SEP:
        sep = _LIST_SEP[attr].strip()
        return tuple(unescape(p.strip()) for p in raw.split(sep) if p.strip())
    raw = unescape(raw)
    if attr == "is_core":
        return raw.lower() in ("true", "yes", "1", "是")
    if attr == "user_weight":
        try:
            return max(0, min(10, int(float(raw))))
        except ValueError:
            return 5
    if attr == "importance":
        try:
            return max(0.0, min(1.0, float(raw)))
        except ValueError:
            return 0.7
    return raw


def _format(attr: str, value: object) -> str:
    """A field's value as one line that reads back as ``value``."""
    if attr in _LIST_SEP:
        sep = _LIST_SEP[attr]
        return sep.join(escape(item, also=sep.strip()) for item in value)  # type: ignore[attr-defined]
    if attr == "is_core":
        return "true" if value else "false"
    return escape(str(value))


def _keywords_line(words: tuple[str, ...]) -> str:
    return f"{KEYWORDS_LABEL} " + ", ".join(escape(w, also=",") for w in words)


def _parse_keywords(raw: str) -> list[str]:
    return [w for w in (unescape(p.strip()) for p in raw.split(",")) if w]


def _note_out(line: str) -> str:
    """A note before the first section as written: never mistaken for the keyword line."""
    return "\\" + line if _KEYWORDS_LOOKALIKE.match(line) else line


def _note_in(line: str) -> str:
    line = line.rstrip()
    return line[1:] if line.startswith("\\") and _KEYWORDS_LOOKALIKE.match(line) else line


def parse_memory(text: str) -> MemoryDocument:
    """Parse MEMORY.md text into a document. Unknown lines are kept as notes, never fatal."""
    title = ""
    sections: list[str] = []
    entries: list[Entry] = []
    notes: list[tuple[str, str]] = []
    keywords: list[str] = []
    section = DEFAULT_SECTION
    seen_heading = False
    current: dict[str, object] | None = None
    body: list[str] = []
    history: list[str] = []

    def flush() -> None:
        nonlocal current, body, history
        if current is None:
            return
        entry_text = unescape("\n".join(body).strip())
        if entry_text:
            values = dict(current)
            values["history"] = tuple(history)
            if not values.get("id"):
                values["id"] = derived_id(entry_text)
            entries.append(Entry(text=entry_text, section=section, **values))  # type: ignore[arg-type]
            if section not in sections:
                sections.append(section)
        current, body, history = None, [], []

    lines = split_lines(text)
    prev = 0
    # A blank line only adds a blank line to the open entry's body (trailing ones are stripped),
    # so only the others are visited: 100,000 blank lines cost one filtering pass.
    filled = [(no, line) for no, line in enumerate(lines, 1) if line and not line.isspace()]
    for no, line in filled:
        if current is not None:
            body.extend([""] * (no - prev - 1))
        prev = no
        if line.startswith("# ") and not title and not entries and not sections:
            title = line.strip()
            continue
        heading = read_heading(line)
        if heading is not None:
            flush()
            section, seen_heading = unescape(heading.strip()), True
            if section not in sections:
                sections.append(section)
            continue
        bullet = _BULLET.match(line)
        if bullet:
            flush()
            current, body = {}, [unescape_text_line(bullet.group(1))]
            continue
        keyword_line = None if seen_heading else _KEYWORDS_LINE.match(line)
        if keyword_line:
            flush()
            keywords.extend(_parse_keywords(keyword_line.group(1)))
            continue
        if current is None:
            if line.strip():
                notes.append((section, line.rstrip()) if seen_heading else ("", _note_in(line)))
            continue
        field_line = _FIELD_LINE.match(line)
        if field_line and field_line.group(1) in _KEYS:
            attr = _KEYS[field_line.group(1)]
            if attr == "history":
                history.append(unescape(field_line.group(2).strip()))
            else:
                current[attr] = _coerce(attr, field_line.group(2))
            continue
        if line.startswith("  ") and line.strip():
            body.append(unescape_text_line(line[2:]))
        else:
            flush()
            notes.append((section, line.rstrip()) if seen_heading else ("", _note_in(line)))
    flush()
    return MemoryDocument(
        title=title or "# MEMORY",
        sections=tuple(sections),
        entries=tuple(entries),
        notes=tuple(notes),
        keywords=tuple(keywords),
    )


def render_entry(entry: Entry) -> str:
    """Render one entry: its bullet, continuation lines, and non-default fields."""
    lines = escape_text_lines(entry.text)
    out = [f"- {lines[0]}"] + [f"  {line}" if line else "" for line in lines[1:]]
    defaults = Entry(id="", text="")
    for f in fields(Entry):
        key = _ATTR_TO_KEY.get(f.name)
        if key is None:
            continue
        value = getattr(entry, f.name)
        if f.name == "history":
            out.extend(f"  - history: {escape(item)}" for item in value)
            continue
        if f.name != "id" and value == getattr(defaults, f.name):
            continue
        out.append(f"  - {key}: {_format(f.name, value)}")
    return "\n".join(out)


def render_memory(doc: MemoryDocument) -> str:
    """Render a document back to MEMORY.md text (parse(render(d)) == d)."""
    out = [doc.title, ""]
    if doc.keywords:
        out.extend([_keywords_line(doc.keywords), ""])
    preamble = [_note_out(line) for sec, line in doc.notes if sec == ""]
    if preamble:
        out.extend([*preamble, ""])
    order = list(doc.sections)
    for e in doc.entries:
        if e.section not in order:
            order.append(e.section)
    for sec, _ in doc.notes:
        if sec and sec not in order:
            order.append(sec)
    for section in order:
        members = [e for e in doc.entries if e.section == section]
        out.append(escape_heading(section))
        out.append("")
        kept = [line for sec, line in doc.notes if sec == section]
        if kept:
            out.extend([*kept, ""])
        for e in members:
            out.append(render_entry(e))
            out.append("")
    return "\n".join(out).rstrip() + "\n"
