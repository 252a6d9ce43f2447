"""Jobs run user by user (docs/trust.md): one user's bad file stops only them.

A user whose file cannot be read (:class:`~memory.errors.UnreadableFileError`) is skipped
and told once what to fix (:class:`~agent.notices.NoticeBook` remembers the file's state
when they were told); any other failure of one user is logged with its trace; either way the
next user goes on.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

from agent.memory_view import file_problem_notice, problem_topic
from agent.notices import NoticeBook
from bot.frontdesk.language import spoken_to
from memory.base.users import check_user_key
from memory.errors import InvalidUserKeyError, UnreadableFileError

if TYPE_CHECKING:
    from bot.frontdesk.language import Languages
    from memory.state.statedb import StateDB
    from memory.store.service import MemoryService

log = logging.getLogger(__name__)

T = TypeVar("T")
# (user_key, text): tells one user something outside a reply (Telegram message, terminal line).
Notifier = Callable[[str, str], Awaitable[None]]


def is_user_key(name: str) -> bool:
    """Whether ``name`` (a session id, a folder) is a user key."""
    try:
        check_user_key(name)
    except InvalidUserKeyError:
        return False
    return True


@dataclass(slots=True)
class PerUser:
    """How a job's run over the users went: a failure of one user never stops the next."""

    done: int = 0
    skipped: list[str] = field(default_factory=list)  # an unreadable file; told once
    failed: list[str] = field(default_factory=list)  # anything else; logged with the trace

    def suffix(self) -> str:
        """``"; 1 user skipped (unreadable file: telegram_5)"`` or nothing."""
        out = ""
        if self.skipped:
            out += f"; {len(self.skipped)} skipped (unreadable file: {', '.join(self.skipped)})"
        if self.failed:
            out += f"; {len(self.failed)} failed ({', '.join(self.failed)})"
        return out


@dataclass(frozen=True, slots=True)
class FileProblems:
    """What telling a user about their unreadable file needs: where it is, the notice book,
    and the language the user speaks."""

    memory: MemoryService
    state: StateDB
    languages: Languages | None

    async def tell(
        self, notifier: Notifier | None, user_key: str, exc: UnreadableFileError
    ) -> None:
        """Tell ``user_key`` once (per state of the file) what to fix; log it either way."""
        topic = problem_topic(exc, self.memory.paths(user_key).root)
        if notifier is None:
            log.warning("%s skipped: %s", user_key, exc)
            return
        book = NoticeBook(self.state)
        if not await asyncio.to_thread(book.claim, user_key, topic, exc.stamp, datetime.now(UTC)):
            log.info("%s skipped: %s is still unreadable (the user was told)", user_key, topic)
            return
        log.warning("%s skipped: %s; telling the user", user_key, exc)
        try:
            lang = spoken_to(self.languages, user_key)
            await notifier(user_key, file_problem_notice(exc, topic, lang))
        except Exception:  # an unreachable user is told at the next tick instead
            log.warning("could not tell %s about %s", user_key, topic, exc_info=True)
            await asyncio.to_thread(book.release, user_key, topic)


async def each_user(
    problems: FileProblems,
    job: str,
    users: Iterable[str],
    work: Callable[[str], Awaitable[T]],
    notifier: Notifier | None,
) -> tuple[list[T], PerUser]:
    """Run ``work`` for each user in turn; one user's failure skips only that user."""
    results: list[T] = []
    run = PerUser()
    for user_key in users:
        try:
            results.append(await work(user_key))
            run.done += 1
        except UnreadableFileError as exc:
            run.skipped.append(user_key)
            await problems.tell(notifier, user_key, exc)
        except Exception:
            run.failed.append(user_key)
            log.exception("job %s failed for %s; the other users go on", job, user_key)
    return results, run


async def deliver_outbox(
    state: StateDB, notifier: Notifier, now: datetime, user_key: str | None = None
) -> int:
    """Hand every queued notice (only ``user_key``'s if given) to its user; returns the count.

    One delivery at a time in the process: the minute job and the deferred-work worker (which
    delivers a compaction's line as soon as it is written) never send the same notice twice.
    """
    book = NoticeBook(state)
    sent = 0
    async with _delivering():
        for notice in await asyncio.to_thread(book.outbox, now, user_key):
            try:
                await notifier(notice.user_key, notice.text)
            except Exception:  # kept in the outbox: the next tick tries again
                log.warning("could not deliver a notice to %s", notice.user_key, exc_info=True)
                continue
            await asyncio.to_thread(book.delivered, notice.id)
            sent += 1
    return sent


_DELIVERING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def _delivering() -> asyncio.Lock:
    """This event loop's delivery lock (a lock belongs to one loop)."""
    loop = asyncio.get_running_loop()
    lock = _DELIVERING.get(loop)
    if lock is None:
        lock = _DELIVERING[loop] = asyncio.Lock()
    return lock
