"""The stretch of conversation an idle summary covers, named in its heading: one codec.

The idle-summary writer (:mod:`history.idle`) names the stretch it summarised in the block's
heading, ``閒置摘要 (2026-03-01 17:00:00 – 2026-03-01 17:02:20)``, in the user's local time,
the same clock the daily log's records carry. Search reads it back to find the records the
summary stands for (:mod:`memory.search.sessions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

IDLE_TITLE = "閒置摘要"
_FORMAT = "%Y-%m-%d %H:%M:%S"
_SPAN = re.compile(
    r"\((\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) – (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\)\s*$"
)
# A stretch longer than this names no records: days of log are not one conversation.
MAX_SPAN_DAYS = 7


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of a user's log, as ``YYYY-MM-DDTHH:MM:SS`` local timestamps (inclusive)."""

    start: str
    end: str

    def days(self) -> list[str]:
        """The daily-log days the stretch touches, first to last."""
        first, last = date.fromisoformat(self.start[:10]), date.fromisoformat(self.end[:10])
        return [f"{first + timedelta(days=n)}" for n in range((last - first).days + 1)]

    def holds(self, timestamp: str) -> bool:
        """Whether a record's timestamp (``YYYY-MM-DDTHH:MM[:SS]``) lies in the stretch; one
        written without seconds (by hand) counts from the stretch's first minute."""
        return self.start[: len(timestamp)] <= timestamp and timestamp[:19] <= self.end


def idle_heading(start: datetime, end: datetime) -> str:
    """The heading of an idle summary of the stretch ``start``..``end`` (local times)."""
    return f"{IDLE_TITLE} ({start:{_FORMAT}} – {end:{_FORMAT}})"


def parse_span(heading: str) -> Span | None:
    """The stretch an idle summary's heading names; None for any other heading."""
    if not heading.startswith(IDLE_TITLE):
        return None
    m = _SPAN.search(heading)
    if m is None:
        return None
    span = Span(f"{m.group(1)}T{m.group(2)}", f"{m.group(3)}T{m.group(4)}")
    try:
        days = (date.fromisoformat(m.group(3)) - date.fromisoformat(m.group(1))).days
    except ValueError:
        return None
    return span if 0 <= days <= MAX_SPAN_DAYS and span.start <= span.end else None
