"""Turn a user's Markdown files into indexable units.

A unit is the smallest piece of a file that the change detector tracks: a MEMORY.md entry,
a daily-log record, or a summary block. Each unit has a stable id within its file and a hash
of its content; the indexer re-indexes a unit only when its hash changes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from pathlib import Path

from memory.base.escaping import read_heading, split_lines
from memory.base.fsutil import read_text
from memory.base.logs import parse_log
from memory.base.markdown import MemoryStatus, parse_memory
from memory.base.users import UserPaths, day_files


class UnitKind(StrEnum):
    """Which file a unit (and each of its index chunks) comes from."""

    MEMORY = "memory"  # a MEMORY.md entry
    LOG = "log"  # a daily-log record
    SUMMARY = "summary"  # a block of MEMORY_FULL.md or auto_summaries.md


KIND_MEMORY = UnitKind.MEMORY
KIND_LOG = UnitKind.LOG
KIND_SUMMARY = UnitKind.SUMMARY

_DATE_IN = re.compile(r"(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True, slots=True)
class Unit:
    """One indexable piece of a user's files."""

    kind: UnitKind
    path: str  # relative to the user's folder
    unit_id: str
    text: str
    content_hash: str
    section: str = ""
    date: str = ""
    line_start: int = 0
    line_end: int = 0
    importance: float = 0.7
    status: str = MemoryStatus.ACTIVE
    refs: tuple[str, ...] = ()
    # Context embedded and keyword-indexed with the unit but not part of its text: a log
    # record is a reply to what came before, and "yes, last Friday" means nothing alone.
    context_before: str = ""
    context_after: str = ""

    def index_text(self, piece: str) -> str:
        """What gets embedded and put in the FTS index for one chunk of this unit."""
        return "\n".join(p for p in (self.context_before, piece, self.context_after) if p)


def _hash(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()


def memory_units(paths: UserPaths) -> list[Unit]:
    """One unit per MEMORY.md entry."""
    doc = parse_memory(read_text(paths.memory_md))
    return [
        Unit(
            kind=KIND_MEMORY,
            path="MEMORY.md",
            unit_id=e.id,
            text=e.text,
            content_hash=e.content_hash(),
            section=e.section,
            date=e.created_at,
            importance=e.importance,
            status=e.status,
            refs=(e.id,),
        )
        for e in doc.entries
    ]


# How many neighbouring records of the same day go into a log record's index text
# (bench/RESULTS.md measures the choice), and how much of each neighbour.
LOG_CONTEXT_BEFORE = 1
LOG_CONTEXT_AFTER = 1
# Records this many apart in one day's log share a neighbour's text in their index text.
LOG_CONTEXT_SPAN = LOG_CONTEXT_BEFORE + LOG_CONTEXT_AFTER
LOG_CONTEXT_CHARS = 300
LOG_CONTEXT_DATE = True


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def log_units(paths: UserPaths, day_file: Path) -> list[Unit]:
    """One unit per record of a daily log, indexed with its date and neighbouring records."""
    day = day_file.stem
    rel = f"memory/{day_file.name}"
    units = []
    records = [r for r in parse_log(day, read_text(day_file)) if r.text]
    texts = [f"{r.who}: {r.text}" for r in records]
    for i, rec in enumerate(records):
        text = texts[i]
        before = [_clip(t, LOG_CONTEXT_CHARS) for t in texts[max(0, i - LOG_CONTEXT_BEFORE) : i]]
        after = [_clip(t, LOG_CONTEXT_CHARS) for t in texts[i + 1 : i + 1 + LOG_CONTEXT_AFTER]]
        if LOG_CONTEXT_DATE:
            before.insert(0, f"[{_day_label(day)}]")
        ctx_before, ctx_after = "\n".join(before), "\n".join(after)
        units.append(
            Unit(
                kind=KIND_LOG,
                path=rel,
                unit_id=rec.record_id,
                text=text,
                context_before=ctx_before,
                context_after=ctx_after,
                content_hash=_hash(text, rec.timestamp, ctx_before, ctx_after),
                section="",
                date=rec.timestamp,
                line_start=rec.line_start,
                line_end=rec.line_end,
                importance=0.5,
                refs=(rec.record_id,),
            )
        )
    return units


def _day_label(day: str) -> str:
    """ "2023-05-08 Monday, 8 May 2023": the date as written both ways people ask about it."""
    try:
        d = date.fromisoformat(day)
    except ValueError:
        return day
    return f"{day} {d:%A}, {d.day} {d:%B %Y}"


def summary_units(path: Path, rel: str) -> list[Unit]:
    """One unit per ``##`` block of a summary file (MEMORY_FULL.md, auto_summaries.md)."""
    units: list[Unit] = []
    heading, start = "", 0
    body: list[str] = []
    lines = split_lines(read_text(path))  # U+2028 and the like in a summary end no line

    def flush(end: int) -> None:
        text = "\n".join(body).strip()
        if heading and text:
            m = _DATE_IN.search(heading)
            units.append(
                Unit(
                    kind=KIND_SUMMARY,
                    path=rel,
                    unit_id=f"{rel}#L{start}",
                    text=f"{heading}\n{text}",
                    content_hash=_hash(heading, text),
                    section=heading,
                    date=m.group(1) if m else "",
                    line_start=start,
                    line_end=end,
                    importance=0.6,
                    refs=(f"{rel}#L{start}",),
                )
            )

    for no, line in enumerate(lines, start=1):
        title = read_heading(line, closing=False)
        if title is not None:
            flush(no - 1)
            heading, start, body = title, no, []
        elif heading:
            body.append(line)
    flush(len(lines))
    return units


def source_files(paths: UserPaths) -> dict[str, Path]:
    """Every indexable file of a user, by its path relative to the user's folder."""
    files = {"MEMORY.md": paths.memory_md}
    for p in day_files(paths):
        files[f"memory/{p.name}"] = p
    files["MEMORY_FULL.md"] = paths.memory_full_md
    files["auto_summaries.md"] = paths.auto_summaries_md
    return files


def units_of(paths: UserPaths, rel: str) -> list[Unit]:
    """The units of one file, by its relative path."""
    if rel == "MEMORY.md":
        return memory_units(paths)
    if rel.startswith("memory/"):
        return log_units(paths, paths.root / rel)
    return summary_units(paths.root / rel, rel)
