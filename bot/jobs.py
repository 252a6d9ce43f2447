"""Scheduled work (docs/architecture.md): idle summaries, indexing, expiry, lifecycle,
and the weekly "these memories are fading: keep?" notice that must come before any archiving.

Each job is a plain ``async def body(services, now) -> str`` that returns one line for the
log. :class:`JobRunner` runs a body: never two runs of one job at once, every run logged,
errors caught and logged with the traceback (a failed run is retried at the next tick), and
the last outcome kept for ``/stats`` (which shows only when and whether it ran: a job's report
covers every user). Blocking work (SQLite, embedding, Markdown files) runs
in a thread, so message handling never waits for a job.

The same specs are scheduled by PTB's JobQueue when the Telegram bot runs or by a plain
APScheduler ``AsyncIOScheduler`` in the terminal chat (both in :mod:`bot.scheduling`). Every
body is idempotent: the idle summary records what it summarised, the indexer compares unit
hashes, pending expiry reports each proposal once, and a second lifecycle run the same night
changes nothing. Every job goes user by user
(:mod:`bot.isolation`): one user's unreadable file skips only that user, who is told once.
"""

from __future__ import annotations

import asyncio
import logging
import time as clock
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time, timedelta, tzinfo
from functools import partial
from typing import TYPE_CHECKING, Any

from agent.deferred import WorkQueue
from agent.notices import NoticeBook
from agent.texts import say
from bot.fading import FADE_EVERY, Offer, fading_body, text_offer
from bot.frontdesk.language import spoken_to
from bot.isolation import FileProblems, Notifier, deliver_outbox, each_user, is_user_key
from history.idle import IdleResult
from memory.base.users import list_user_keys
from memory.index.indexer import Indexer, SyncStats
from memory.write.lifecycle import DELETED, Change
from memory.write.proposals import Proposal

if TYPE_CHECKING:
    from bot.app import Services

log = logging.getLogger(__name__)

JobBody = Callable[["Services", datetime], Awaitable[str]]

IDLE_EVERY = timedelta(minutes=5)
INDEX_EVERY = timedelta(minutes=1)  # a hand edit of MEMORY.md is searchable within a minute
EXPIRY_EVERY = timedelta(minutes=1)
UNDO_EXPIRY_EVERY = timedelta(minutes=1)  # /undo's window is minutes: check each minute
LIFECYCLE_AT = time(3, 30)  # nightly, in the user's time zone


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One scheduled job: its body and when it runs (every ``every`` or daily at ``daily_at``)."""

    name: str
    body: JobBody
    every: timedelta | None = None
    daily_at: time | None = None
    first: timedelta = timedelta(seconds=15)


@dataclass(frozen=True, slots=True)
class JobStatus:
    """The last run of one job."""

    name: str
    last_run: datetime
    ok: bool
    detail: str
    seconds: float
    runs: int


def expiry_notice(text: str, lang: str) -> str:
    """The one sentence a user gets, in ``lang``, when a proposed memory expired unconfirmed."""
    short = text if len(text) <= 80 else text[:79] + "…"
    return say("proposal_expiry_notice", lang, short=short)


def _problems(services: Services) -> FileProblems:
    """What a job tells a user whose file it cannot read with."""
    return FileProblems(services.memory, services.state, services.languages)


# -- the bodies --------------------------------------------------------------------------
async def idle_summaries_job(
    services: Services, now: datetime, notifier: Notifier | None = None
) -> str:
    """One summary for each session idle over 60 minutes."""
    users = [
        sid
        for sid in await asyncio.to_thread(services.sessions.session_ids)
        if is_user_key(sid)  # a hand-made session file has no user to attach a summary to
    ]

    async def one(user_key: str) -> IdleResult | None:
        return await services.idle.summarize_session(user_key, user_key, now)

    results, run = await each_user(_problems(services), "idle_summaries", users, one, notifier)
    made = [r for r in results if r is not None]
    return (
        f"{len(made)} idle summaries"
        + (f" ({', '.join(r.session_id for r in made)})" if made else "")
        + run.suffix()
    )


async def index_job(services: Services, now: datetime, notifier: Notifier | None = None) -> str:
    """New daily-log lines, summaries and hand edits of MEMORY.md, indexed incrementally.

    Each file whose size and mtime are unchanged is skipped unread, and within a changed file
    only new or changed units are embedded, so the job is cheap and safe to repeat.
    """
    indexer = services.memory.indexer
    users = list_user_keys(services.settings.data_dir)
    work = WorkQueue(services.state)

    async def one(user_key: str) -> SyncStats:
        return await _index_user(indexer, work, user_key)

    results, run = await each_user(_problems(services), "index", users, one, notifier)
    stats = sum(results, SyncStats())
    return (
        f"{stats.added} units added, {stats.removed} removed, {stats.files} files changed"
        + run.suffix()
    )


async def _index_user(indexer: Indexer, work: WorkQueue, user_key: str) -> SyncStats:
    """Sync one user's files, unless the deferred-work worker still has rows of theirs.

    Those rows index what the user's turns wrote, in order and at the background priority;
    this job embedding the same lines beside them (at the turns' priority) would spend the
    CPU twice and take it from the answers. A hand edit waits for the next tick then.
    """
    if await asyncio.to_thread(work.count, user_key):
        return SyncStats()
    return await asyncio.to_thread(indexer.sync_user, user_key)


def pending_expiry_job(notifier: Notifier | None = None, user_key: str | None = None) -> JobBody:
    """Expire proposals past their time and tell each owner once.

    First the crash window heals: a due proposal whose entry MEMORY.md already holds is
    marked confirmed, never reported as "not saved". A user whose MEMORY.md cannot be read
    keeps their proposals waiting (they may be written there) and is told what to fix. The
    notices go through the outbox (:mod:`agent.notices`), queued with the expiry itself, so
    an unreachable user or a crash before sending is told at a later tick. With ``user_key``
    (a terminal chat beside the service) only that user's proposals and notices are touched.
    """

    async def body(services: Services, now: datetime) -> str:
        healed = await asyncio.to_thread(services.library.reconcile_pending, now, due_only=True)
        for owner, exc in sorted(healed.unreadable.items()):
            await _problems(services).tell(notifier, owner, exc)
        book = NoticeBook(services.state)

        def queue_notice(conn: Any, proposal: Proposal) -> None:
            # Queued in the expiry's own transaction: a crash right after it loses no notice.
            lang = spoken_to(services.languages, proposal.user_key)
            book.queue(proposal.user_key, expiry_notice(proposal.text, lang), now, conn)

        expired = await asyncio.to_thread(
            services.pending.expire_due,
            now,
            user_key=user_key,
            skip_users=healed.unreadable.keys(),
            on_expired=queue_notice if notifier is not None else None,
        )
        told = (
            await deliver_outbox(services.state, notifier, now, user_key)
            if notifier is not None
            else 0
        )
        detail = f"{len(expired)} proposals expired, {told} users told"
        if healed.confirmed:
            detail += f"; {len(healed.confirmed)} found written and marked confirmed"
        if healed.unreadable:
            detail += f"; {len(healed.unreadable)} users' proposals wait (unreadable MEMORY.md)"
        return detail

    return body


async def forget_undo_job(services: Services, now: datetime) -> str:
    """Drop the undo copies of forgotten memories whose /undo window has closed."""
    dropped = await asyncio.to_thread(services.forgetter.expire, now)
    return f"{dropped} undo copies dropped"


async def lifecycle_job(
    services: Services, now: datetime, notifier: Notifier | None = None
) -> str:
    """The nightly health scores, low priority / archive, and old-archive deletion."""
    users = list_user_keys(services.settings.data_dir)

    async def one(user_key: str) -> list[Change]:
        return await asyncio.to_thread(services.lifecycle.run_user, user_key, now)

    results, run = await each_user(_problems(services), "lifecycle", users, one, notifier)
    changes = [c for per_user in results for c in per_user]
    deleted = sum(1 for c in changes if c.new == DELETED)
    return (
        f"{len(changes)} status changes ({deleted} deleted) over {len(users)} users" + run.suffix()
    )


def default_jobs(
    notifier: Notifier | None = None,
    offer: Offer | None = None,
    fade_every: timedelta = FADE_EVERY,
) -> list[JobSpec]:
    """The jobs of docs/architecture.md, "Scheduled work", with their schedules.

    ``offer`` sends the fading notice with its keep buttons (the notifier's text otherwise).
    """
    fading = fading_body(notifier, offer or text_offer(notifier))
    return [
        JobSpec(
            "idle_summaries", partial(idle_summaries_job, notifier=notifier), every=IDLE_EVERY
        ),
        JobSpec(
            "index",
            partial(index_job, notifier=notifier),
            every=INDEX_EVERY,
            first=timedelta(seconds=5),
        ),
        JobSpec("pending_expiry", pending_expiry_job(notifier), every=EXPIRY_EVERY),
        JobSpec("forget_undo", forget_undo_job, every=UNDO_EXPIRY_EVERY),
        JobSpec("lifecycle", partial(lifecycle_job, notifier=notifier), daily_at=LIFECYCLE_AT),
        JobSpec("fading", fading, every=fade_every, first=min(timedelta(seconds=15), fade_every)),
    ]


def user_jobs(
    user_key: str, notifier: Notifier | None = None, fade_every: timedelta = FADE_EVERY
) -> list[JobSpec]:
    """The same jobs, schedules and names over one user's files only.

    The terminal chat runs these: a service on the same data dir runs the jobs for everyone
    else, and a second runner over their files would summarise, expire and archive them
    beside it (and tell nobody about their expired proposals).
    """

    async def idle(services: Services, now: datetime) -> str:
        made = await services.idle.summarize_session(user_key, user_key, now)
        return f"{1 if made else 0} idle summaries of {user_key}"

    async def index(services: Services, now: datetime) -> str:
        work = WorkQueue(services.state)
        stats = await _index_user(services.memory.indexer, work, user_key)
        return f"{stats.added} units added, {stats.removed} removed, {stats.files} files changed"

    async def lifecycle(services: Services, now: datetime) -> str:
        changes = await asyncio.to_thread(services.lifecycle.run_user, user_key, now)
        return f"{len(changes)} status changes of {user_key}"

    async def forget_undo(services: Services, now: datetime) -> str:
        dropped = await asyncio.to_thread(services.forgetter.expire, now, user_key)
        return f"{dropped} undo copies of {user_key} dropped"

    bodies: dict[str, JobBody] = {
        "fading": fading_body(notifier, text_offer(notifier), user_key),
        "idle_summaries": idle,
        "forget_undo": forget_undo,
        "index": index,
        "pending_expiry": pending_expiry_job(notifier, user_key),
        "lifecycle": lifecycle,
    }
    specs = default_jobs(notifier, fade_every=fade_every)
    return [replace(spec, body=bodies[spec.name]) for spec in specs]


# -- running -----------------------------------------------------------------------------
@dataclass
class JobRunner:
    """Runs job bodies one at a time per job, logs them, and keeps their last status."""

    services: Services
    tz: tzinfo | None = None
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    status: dict[str, JobStatus] = field(default_factory=dict)
    _running: set[str] = field(default_factory=set)

    async def run(self, spec: JobSpec) -> JobStatus | None:
        """Run one job now; None when the previous run of it is still going."""
        if spec.name in self._running:
            log.info("job %s still running; this tick is skipped", spec.name)
            return None
        self._running.add(spec.name)
        started = clock.monotonic()
        when = self.now()
        try:
            detail, ok = await spec.body(self.services, when), True
            log.info("job %s: %s", spec.name, detail)
        except Exception as exc:
            detail, ok = f"failed: {exc}", False
            log.error("job %s failed; it runs again at its next tick", spec.name, exc_info=True)
        finally:
            self._running.discard(spec.name)
        previous = self.status.get(spec.name)
        status = JobStatus(
            spec.name,
            when,
            ok,
            detail,
            round(clock.monotonic() - started, 3),
            (previous.runs if previous else 0) + 1,
        )
        self.status[spec.name] = status
        return status

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no job is running (at shutdown); False if one still runs at ``timeout``."""
        deadline = clock.monotonic() + timeout
        while self._running and clock.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return not self._running

    def summary(self) -> list[tuple[str, str]]:
        """``(job, "MM-DD HH:MM ok")`` pairs for a user's stats view.

        The detail stays in the log: it covers every user (session ids, counts, a failing
        user's file), and a user sees only their own.
        """
        return [
            (s.name, f"{s.last_run.astimezone(self.tz):%m-%d %H:%M} {'ok' if s.ok else 'FAILED'}")
            for s in sorted(self.status.values(), key=lambda s: s.name)
        ]
