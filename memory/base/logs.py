"""The daily log format, shared by the writer in history/ and the indexer.

A log file ``memory/YYYY-MM-DD.md`` reads::

    # 2026-11-22

    - 14:03:12 user: 我喜歡喝咖啡
    - 14:03:15 user: a message
      that spans two lines {#tg-4711}

Each record starts with ``- HH:MM[:SS] who: ``; continuation lines are indented by two
spaces; an optional trailing ``{#ref}`` names the record (a message id) so search results can
point back at it. Records without a ref are named by their first line number.

A message never forges a record: :func:`format_record` and :func:`parse_log` are the one
codec for the format, and ``parse(format(record)) == record`` for any text and speaker. Line
separators other than ``\n`` (U+2028, ``\x85``, form feed ...), control characters and blank
ends are written as ``&#x2028;``-style references (:mod:`memory.base.escaping`), and only ``\n``
ends a line when the log is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from memory.base.escaping import escape, split_lines, unescape

_RECORD = re.compile(r"^- (\d{2}:\d{2}(?::\d{2})?) ([^:]+): ?(.*)$")
_REF = re.compile(r"\{#([A-Za-z0-9_.:;-]{1,64})\}")
_REF_MAX = 67  # "{#" + 64 + "}"
_BAD_REF = re.compile(r"[^A-Za-z0-9_.:;-]+")
# Written after text that ends like a ref when the record has none, so it is not read as one.
_NO_REF = "{#}"


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One message in a daily log."""

    day: str
    time: str
    who: str
    text: str
    ref: str
    line_start: int
    line_end: int

    @property
    def record_id(self) -> str:
        """The record's id: its ref, or its day and first line number."""
        return self.ref or f"{self.day}#L{self.line_start}"

    @property
    def timestamp(self) -> str:
        """``YYYY-MM-DDTHH:MM[:SS]`` (local time of the log's time zone)."""
        return f"{self.day}T{self.time}"


def _ref_at_end(body: str) -> tuple[str, int] | None:
    """The ref ``{#...}`` or no-ref ``{#}`` the body ends with, and where it starts.

    Only the stripped end is looked at (a search for ``\\s*{#..}\\s*$`` backtracks over every
    run of blanks in the body).
    """
    end = len(body.rstrip())
    if body.endswith(_NO_REF, 0, end):
        return "", end - len(_NO_REF)
    start = body.rfind("{#", max(0, end - _REF_MAX), end)
    m = _REF.fullmatch(body, start, end) if start >= 0 else None
    return (m.group(1), start) if m else None


def log_header(day: str) -> str:
    """The first lines of a new daily log."""
    return f"# {day}\n\n"


def safe_ref(ref: str) -> str:
    """A message id usable as a record ref (``{#ref}``): safe characters, 64 at most."""
    return _BAD_REF.sub("-", ref).strip("-")[:64]


def format_record(when: datetime, who: str, text: str, ref: str = "") -> str:
    """Format one record (ending with a newline); newlines in ``text`` become continuations.

    ``who`` (``"user"`` when empty) and ``text`` read back exactly as given; ``ref`` is
    made safe with :func:`safe_ref` first.
    """
    ref = safe_ref(ref)
    body = escape(text, multiline=True)
    # A literal "{#...}" at the end of user text must not be read back as a ref.
    if not ref and _ref_at_end(body):
        body += " {#}"
    tail = f" {{#{ref}}}" if ref else ""
    lines = body.split("\n")
    body = lines[0] + "".join(f"\n  {line}" if line else "\n" for line in lines[1:])
    return f"- {when:%H:%M:%S} {escape(who, also=':') or 'user'}: {body}{tail}\n"


def parse_log(day: str, text: str) -> list[LogRecord]:
    """Parse a daily log into records; unknown lines are skipped.

    A blank line inside a record (an empty line of a message) belongs to it when an indented
    line follows; otherwise it ends the record.
    """
    records: list[LogRecord] = []
    cur: dict[str, object] | None = None
    body: list[str] = []
    blanks = 0

    def flush(end: int) -> None:
        nonlocal cur, body
        if cur is None:
            return
        full = "\n".join(body)
        ref = ""
        if found := _ref_at_end(full):
            ref, full = found[0], full[: found[1]]
        records.append(
            LogRecord(
                day=day,
                time=str(cur["time"]),
                who=unescape(str(cur["who"])),
                text=unescape(full.strip()),
                ref=ref,
                line_start=int(str(cur["line"])),
                line_end=end,
            )
        )
        cur, body = None, []

    lines = split_lines(text)
    prev = 0
    # Blank lines change nothing but the count of blanks a record has gathered, so only the
    # others are visited (100,000 blank lines cost one filtering pass, not 100,000 turns).
    filled = [(no, line) for no, line in enumerate(lines, 1) if line and not line.isspace()]
    for no, line in filled:
        if cur is not None:
            blanks += no - prev - 1
        prev = no
        m = _RECORD.match(line)
        if m:
            flush(no - 1 - blanks)
            cur = {"time": m.group(1), "who": m.group(2).strip(), "line": no}
            body, blanks = [m.group(3)], 0
        elif cur is not None and line.startswith("  ") and line.strip():
            body.extend([""] * blanks + [line[2:]])
            blanks = 0
        elif cur is not None:
            flush(no - 1 - blanks)
    if cur is not None:
        blanks += len(lines) - prev
    flush(len(lines) - blanks)
    return records
