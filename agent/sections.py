"""Which MEMORY.md sections a message is about by meaning (section gating's "clear match").

Each section is described by its heading and the summaries of a few of its newest live
entries (``偏好 Preferences: 我喜歡喝拿鐵咖啡; I prefer dark mode``), embedded once per
description (:class:`memory.index.passages.PassageCache`, kept in the index so a cold turn
embeds only its query) and compared with the query vector the
turn computed for search. The sections closest to the message, within ``MEANING_MARGIN`` of
the closest one, are the ones it is about; gating never hides them. Keywords in both
languages are the other half of the match (:mod:`history.section_words`).

The margin was chosen on 17 zh/en messages over six sections with e5: every message's own
section was kept while, on average, two of the five other sections came along.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from agent.selection import L1, L2, Selection
from memory.base.markdown import Entry
from memory.index.embedders import Vector
from memory.index.passages import PassageCache
from memory.search.scoring import calibrate
from memory.write.governance import LIVE, summary_of

# Calibrated similarity (0 = unrelated, 1 = identical) a section may trail the closest by.
MEANING_MARGIN = 0.08
# Entries whose summaries describe a section.
ENTRIES_PER_SECTION = 3
# MEMORY_TOPIC.md's summary is one short line.
SUMMARY_CHARS = 80


def section_descriptions(
    entries: Iterable[Entry], per_section: int = ENTRIES_PER_SECTION
) -> dict[str, str]:
    """Section -> ``heading: summary; summary`` of its newest live entries, in file order."""
    by_section: dict[str, list[Entry]] = {}
    for e in entries:
        if e.status in LIVE and e.text.strip():
            by_section.setdefault(e.section, []).append(e)
    out = {}
    for section, members in by_section.items():
        newest = sorted(members, key=lambda e: e.created_at, reverse=True)[:per_section]
        out[section] = f"{section}: " + "; ".join(summary_of(e) for e in newest)
    return out


def closest(similarities: Mapping[str, float], margin: float = MEANING_MARGIN) -> list[str]:
    """The sections within ``margin`` of the most similar one (none when there are none)."""
    if not similarities:
        return []
    best = max(similarities.values())
    return [s for s, sim in similarities.items() if sim >= best - margin]


class SectionMatcher:
    """Finds the sections a query vector is about; section vectors are cached by text."""

    def __init__(self, cache: PassageCache, floor: float, margin: float = MEANING_MARGIN) -> None:
        self.cache = cache
        self.floor = floor
        self.margin = margin

    def similarities(
        self, descriptions: Mapping[str, str], qvec: Vector, user_key: str | None = None
    ) -> dict[str, float]:
        """Section -> calibrated similarity of its description to the query (the vectors of
        ``user_key``'s descriptions are kept in the index when the cache has a store)."""
        names = list(descriptions)
        vectors = self.cache.vectors([descriptions[n] for n in names], user_key)
        return {
            n: calibrate(float(np.dot(qvec, v)), self.floor)
            for n, v in zip(names, vectors, strict=True)
        }

    def about(
        self, descriptions: Mapping[str, str], qvec: Vector, user_key: str | None = None
    ) -> list[str]:
        """The sections the query is about by meaning."""
        return closest(self.similarities(descriptions, qvec, user_key), self.margin)


def section_summaries(selection: Selection) -> dict[str, str]:
    """Section -> the summary of the first memory this turn looked up in it (L1/L2).

    The topic index writes the dominant section's into MEMORY_TOPIC.md as its one line.
    """
    out: dict[str, str] = {}
    for item in selection.items:
        c = item.candidate
        if c.section and c.layer in (L1, L2) and c.section not in out:
            out[c.section] = " ".join((c.summary or c.text).split())[:SUMMARY_CHARS]
    return out
