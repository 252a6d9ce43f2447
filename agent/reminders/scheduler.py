"""The scheduler seam: when to wake up for which key, and an adapter over APScheduler.

The reminder service only says "call me with this key at that time" and "forget that key";
PTB's JobQueue (the bot) and an ``AsyncIOScheduler`` (the terminal chat) both fit behind
:class:`ReminderScheduler`. A job fires late rather than never (no misfire grace): the service
decides what "late" means, and its claim in ``pcai.db`` makes a duplicate wake-up harmless.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol

log = logging.getLogger(__name__)

Dispatch = Callable[[str], Awaitable[None]]


class ReminderScheduler(Protocol):
    """Wakes the service up with ``key`` at ``when``; one pending wake-up per key."""

    def schedule_at(self, when: datetime, key: str) -> None:
        """Call back with ``key`` at ``when`` (replacing an earlier wake-up for ``key``)."""
        ...

    def cancel(self, key: str) -> None:
        """Forget the wake-up for ``key``, if any."""
        ...


class NoScheduler:
    """A scheduler that schedules nothing (commands run outside the bot's process)."""

    def schedule_at(self, when: datetime, key: str) -> None:
        """Do nothing: the running bot picks the reminder up at its next start or poll."""

    def cancel(self, key: str) -> None:
        """Do nothing."""


class APSchedulerAdapter:
    """:class:`ReminderScheduler` over an APScheduler 3 scheduler (``AsyncIOScheduler``).

    ``dispatch`` (the service's ``on_due``) may be assigned after construction, since the
    service is built with this adapter.
    """

    def __init__(self, scheduler: Any, dispatch: Dispatch | None = None) -> None:
        self.scheduler = scheduler
        self.dispatch = dispatch

    async def _run(self, key: str) -> None:
        if self.dispatch is None:
            log.warning("reminder wake-up %s with nothing to dispatch to", key)
            return
        try:
            await self.dispatch(key)
        except Exception:  # one reminder's failure must not stop the scheduler
            log.exception("reminder wake-up %s failed", key)

    def schedule_at(self, when: datetime, key: str) -> None:
        """Add (or replace) a one-off job with id ``key``."""
        self.scheduler.add_job(
            self._run,
            "date",
            run_date=when,
            args=[key],
            id=key,
            name=key,
            replace_existing=True,
            misfire_grace_time=None,
            coalesce=True,
        )

    def cancel(self, key: str) -> None:
        """Remove the job ``key`` if it is still waiting."""
        from apscheduler.jobstores.base import JobLookupError

        with contextlib.suppress(JobLookupError):
            self.scheduler.remove_job(key)
