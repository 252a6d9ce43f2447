"""What a turn tells or notes besides its answer: the compaction line and short-term notes."""

from __future__ import annotations

import logging

from agent.types import IncomingMessage
from history.compaction import CompactionResult
from memory.guards import mask
from memory.short_term import ShortTermStore, categories_in

log = logging.getLogger(__name__)

# Seed 003 §6.1: the compaction turn says, in one line, that the talk went into memory.
COMPACTED = {
    "zh": "📝 前面的討論重點已寫入記憶（MEMORY_FULL.md § {heading}{keywords}），"
    "之後只帶最近幾輪。",
    "en": "📝 I wrote the earlier conversation into memory "
    "(MEMORY_FULL.md § {heading}{keywords}); from here on I keep only the last few turns.",
}


def compacted_line(result: CompactionResult, lang: str) -> str:
    """The one line saying the conversation was written to memory (and its new keywords)."""
    zh = lang == "zh"
    words = ("、" if zh else ", ").join(result.keywords)
    if words:
        words = ("；新關鍵字：" if zh else "; new keywords: ") + words
    return COMPACTED["zh" if zh else "en"].format(heading=result.heading, keywords=words)


def note_short_term(store: ShortTermStore | None, key: str, message: IncomingMessage) -> None:
    """Seed 004 §3.2.1: a message about the weather, the calendar or mail is kept (masked)
    with its date under each category it names, for the keyword lookup of later turns."""
    if store is None:
        return
    for category in categories_in(message.text):
        try:
            store.add(key, category, mask(message.text), message.time)
        except Exception:  # a note the lookup misses later; the answer is not affected
            log.warning("%s: short-term note not stored", key, exc_info=True)


def with_line(text: str, result: CompactionResult | None, lang: str) -> str:
    """``text``, and the compaction line under it when this turn compacted."""
    return text if result is None else f"{text}\n\n{compacted_line(result, lang)}"
