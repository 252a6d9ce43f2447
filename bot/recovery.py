"""Heals what a crash or a damaged file left behind: at start, and before a job reports.

- A crash between writing a confirmed memory to MEMORY.md and marking its proposal leaves the
  row pending while the entry exists; ``Memory.reconcile_pending`` marks it confirmed (the entry
  id is derived from the proposal id), so it is never reported as "not saved".
- A damaged ``pcai.db`` was set aside by :class:`~memory.state.statedb.StateDB`; the owners of the
  proposals the copy still names get one notice through the outbox (:mod:`agent.notices`).
  The copies on disk are the record, so a crash right after the set-aside still tells them
  at the next start; each copy is handled once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from agent.notices import NoticeBook
from agent.texts import say
from bot.frontdesk.language import spoken_to
from memory.state.statedb import salvage_pending, set_aside_copies

if TYPE_CHECKING:
    from bot.frontdesk.language import Languages
    from memory.api import Memory
    from memory.state.statedb import StateDB

log = logging.getLogger(__name__)


def lost_proposals_notice(texts: Sequence[str], lang: str) -> str:
    """The one notice a user gets, in ``lang``, when a damaged ``pcai.db`` took their pending
    proposals."""
    shown = say("list_sep", lang).join(
        say("quoted", lang, text=t if len(t) <= 40 else t[:39] + "…") for t in texts[:3]
    )
    more = f" (+{len(texts) - 3})" if len(texts) > 3 else ""
    return say("lost_proposals", lang, shown=shown, more=more)


def tell_lost_proposals(state: StateDB, languages: Languages | None, now: datetime) -> None:
    """Queue one notice per owner of the proposals each set-aside ``pcai.db`` still names."""
    book = NoticeBook(state)
    for copy in set_aside_copies(state.path):
        if book.batch_queued(copy.name):
            continue
        lost = salvage_pending(copy)
        by_user: dict[str, list[str]] = {}
        for p in lost or ():
            by_user.setdefault(p.user_key, []).append(p.text)
        if lost is None:
            log.warning("%s no longer says whose pending proposals were lost", copy.name)
        else:
            log.warning(
                "%s held %d pending proposals%s; their owners are told",
                copy.name,
                len(lost),
                f" of {', '.join(sorted(by_user))}" if by_user else "",
            )
        notices = [
            (u, lost_proposals_notice(texts, spoken_to(languages, u)))
            for u, texts in by_user.items()
        ]
        book.queue_batch(copy.name, notices, now)


def recover_at_start(
    library: Memory, languages: Languages | None, now: datetime | None = None
) -> None:
    """Tell the owners of proposals a damaged ``pcai.db`` lost; heal the crash window.

    Never raises: healing must not become the reason the bot cannot start.
    """
    now = now or datetime.now(UTC)
    try:
        tell_lost_proposals(library.state, languages, now)
    except Exception:
        log.exception("could not queue the notices of the lost proposals")
    try:
        healed = library.reconcile_pending(now)
        for user_key, exc in healed.unreadable.items():
            log.warning("%s: pending proposals not checked at start: %s", user_key, exc)
    except Exception:  # the expiry job reconciles again before it reports anything
        log.exception("reconciling pending proposals at start failed")
