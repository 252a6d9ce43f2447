"""What a turn tells or notes besides its answer: the compaction line and short-term notes."""

from __future__ import annotations

import logging

from agent.texts import say, summary_name
from agent.types import IncomingMessage
from history.compaction import CompactionResult
from history.sessions import is_group_session
from memory.base.guards import mask
from memory.state.short_term import ShortTermStore, categories_in

log = logging.getLogger(__name__)


def compacted_line(result: CompactionResult, lang: str) -> str:
    """The one line saying the conversation was written to memory, and its new keywords."""
    words = say("list_sep", lang).join(result.keywords)
    if words:
        words = say("compacted_keywords", lang, words=words)
    heading = summary_name(result.heading, lang)
    return say("compacted", lang, heading=heading, keywords=words)


def note_short_term(store: ShortTermStore | None, key: str, message: IncomingMessage) -> None:
    """A message about the weather, the calendar or mail is kept (masked) with its date
    under each category it names, for the keyword lookup of later turns."""
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


def session_notice(kept_as: str, lang: str) -> str:
    """The notice that the stored conversation was unreadable and kept as ``kept_as``."""
    return say("session_unreadable", lang, kept_as=kept_as)


def session_id_of(message: IncomingMessage) -> str | None:
    """The sender's private session, or the group's own one (never the sender's in a group)."""
    if not message.in_group:
        return message.user_key
    return message.group_session if is_group_session(message.group_session) else None
