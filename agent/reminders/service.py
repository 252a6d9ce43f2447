"""The reminder service: propose, confirm, act on, list, and fire reminders exactly once.

A reminder starts as a proposal (from ``/remind``, the model's ``reminder_create`` tool, or a
date in a confirmed memory) and is scheduled only when its owner confirms it with a proof of
their act, like a memory: a :class:`memory.write.consent.UserAct` of kind ``reminder`` that the bot
layer's mint sealed, checked here with the mint's :class:`~memory.write.consent.ActCheck`. Firing
claims the row in ``pcai.db`` before sending (see agent/reminders/store.py): a restart during a
send leaves the row ``unknown`` and never sends it again; a reminder that came due while the
process was down fires at start, marked late.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from agent.reminders import store as rs
from agent.reminders.errors import (
    NotDeliveredError,
    ReminderExpiredError,
    ReminderInPastError,
    ReminderNotFoundError,
    ReminderStateError,
)
from agent.reminders.proposals import ProposalsMixin
from agent.reminders.recurrence import Recurrence, at_wall
from agent.reminders.scheduler import NoScheduler, ReminderScheduler
from agent.reminders.settings import UserSettingsMixin
from agent.reminders.store import Reminder, ReminderStore
from agent.reminders.texts import alert_text
from agent.reminders.types import FireResult, Listed, ReminderConfig, StartReport
from memory.write.consent import ActCheck, Action, NotTheUsersActError

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
Sender = Callable[[Reminder, str], Awaitable[str]]  # returns the transport's message id
BriefingHook = Callable[[str, date], Awaitable[None]]
Owns = Callable[[str], bool]  # which users' reminders this process sends
# "10m" names the short snooze (its length is the service's ``snooze_length``): the code stays in
# the buttons already sent in users' chats and in the terminal's typed command.
SNOOZE_CHOICES = ("10m", "1h", "tomorrow")


def _utc(clock: Clock) -> Clock:
    """``clock`` read in UTC, so adding minutes and comparing times never meet a DST fold."""

    def now() -> datetime:
        return clock().astimezone(UTC)

    return now


def _answered() -> ReminderStateError:
    return ReminderStateError("already_answered")


class ReminderService(ProposalsMixin, UserSettingsMixin):
    """Reminders of every user, over one :class:`ReminderStore`.

    ``sender`` and ``on_briefing`` may be assigned after construction (the transport is built
    after the services); until then nothing is claimed, so nothing is lost. ``acts`` checks
    the user's answers (without it nobody can confirm); ``owns`` names the users whose
    reminders this process schedules and sends (the Telegram bot its ``telegram_`` users, a
    terminal chat beside it only its own user), so two processes never fight over a send.
    """

    def __init__(
        self,
        store: ReminderStore,
        *,
        default_zone: str,
        clock: Clock,
        scheduler: ReminderScheduler | None = None,
        sender: Sender | None = None,
        on_briefing: BriefingHook | None = None,
        config: ReminderConfig | None = None,
        acts: ActCheck | None = None,
        owns: Owns | None = None,
        snooze_length: timedelta = timedelta(minutes=10),
    ) -> None:
        self.store = store
        self.default_zone = self._zone_info(default_zone)
        self.clock = _utc(clock)
        self.scheduler: ReminderScheduler = scheduler or NoScheduler()
        self.sender = sender
        self.on_briefing = on_briefing
        self.config = config or ReminderConfig()
        self.acts = acts
        self.owns: Owns = owns or (lambda user_key: True)
        # Each person's language (set by the composition root); None: English.
        self.language_of: Callable[[str], str] | None = None
        if snooze_length <= timedelta(0):
            raise ValueError(f"the short snooze must be longer than 0, not {snooze_length}")
        self.snooze_length = snooze_length  # the short Snooze button ("10m")

    # -- the user's acts -------------------------------------------------------------------
    def _mine(self, user_key: str, reminder_id: int) -> Reminder:
        try:
            return self.store.get(user_key, reminder_id)
        except rs.ReminderNotFoundError:
            raise ReminderNotFoundError("not_found", reminder_id=reminder_id) from None

    def _acting(self, act: object, user_key: str, reminder_id: int, action: Action) -> Reminder:
        if self.acts is None:
            raise NotTheUsersActError("Nothing here can take the user's answer to a reminder.")
        checked = self.acts.verify(act, (action,), kind="reminder")
        if checked.user_key == user_key and checked.proposal_id != str(reminder_id):
            raise NotTheUsersActError("That act answers another reminder.")
        if checked.user_key != user_key:
            # Someone else's act never answers this user's proposal: report it as absent.
            raise ReminderNotFoundError("not_found", reminder_id=reminder_id)
        row = self._mine(user_key, reminder_id)
        if row.status != rs.PROPOSED:
            raise ReminderStateError("answered", status=row.status)
        return row

    def confirm(self, act: object, user_key: str, reminder_id: int) -> Reminder:
        """The user says yes (a sealed ``confirm`` act): ``proposed -> scheduled``, scheduled."""
        row = self._acting(act, user_key, reminder_id, "confirm")
        now = self.clock()
        if now - row.created_at > self.config.proposal_ttl:
            self.store.cancel(row.id, now, "expired")
            raise ReminderExpiredError("expired")
        due = row.due
        if row.recurrence and due <= now:
            due = Recurrence.decode(row.recurrence).next_after(now, ZoneInfo(row.zone))
        elif due <= now:
            self.store.cancel(row.id, now, "expired")
            raise ReminderInPastError("passed_waiting")
        confirmed = self.store.confirm(row.id, due, now)
        if confirmed is None:
            raise _answered()
        self.scheduler.schedule_at(confirmed.due, confirmed.key)
        return confirmed

    def reject(self, act: object, user_key: str, reminder_id: int) -> Reminder:
        """The user says no (a sealed ``reject`` act): the proposal is dropped."""
        row = self._acting(act, user_key, reminder_id, "reject")
        done = self.store.cancel(row.id, self.clock(), "rejected")
        if done is None:
            raise _answered()
        return done

    def cancel(self, user_key: str, reminder_id: int) -> Reminder:
        """Stop a reminder (a recurring one for good)."""
        row = self._mine(user_key, reminder_id)
        cancelled = self.store.cancel(row.id, self.clock(), "cancelled")
        if cancelled is None:
            raise ReminderStateError("not_cancellable", status=row.status)
        self.scheduler.cancel(row.key)
        return cancelled

    def snooze(self, user_key: str, reminder_id: int, choice: str) -> Reminder:
        """Ring again after the short snooze (``10m``), an hour (``1h``) or tomorrow.

        The short snooze lasts :attr:`snooze_length` (10 minutes unless configured).

        "Tomorrow" is tomorrow at the wall-clock time of the alert being answered (the last
        occurrence), not of the button press. A recurring reminder keeps its rule: the snooze
        is a one-off copy of it.
        """
        if choice not in SNOOZE_CHOICES:
            raise ValueError(f"snooze is one of {SNOOZE_CHOICES}, not {choice!r}")
        row = self._mine(user_key, reminder_id)
        now = self.clock()
        delta = {"10m": self.snooze_length, "1h": timedelta(hours=1)}.get(choice)
        # "In 10 minutes" is a moment; "tomorrow" is the alert's clock time (a zone change
        # keeps the one and moves the other).
        anchor = rs.INSTANT if delta is not None else rs.WALL
        if delta is None:
            zone = ZoneInfo(row.zone)
            was = (row.occurrence or row.due).astimezone(zone)
            day = now.astimezone(zone).date() + timedelta(days=1)
            due = at_wall(day, was.hour, was.minute, zone)
        else:
            due = now + delta
        if row.recurrence and row.status in (rs.SCHEDULED, rs.SENT, rs.UNKNOWN):
            copy = self.store.add(
                user_key,
                row.text,
                due=due,
                zone=row.zone,
                now=now,
                status=rs.SCHEDULED,
                source=f"snooze:{row.id}",
                anchor=anchor,
            )
            self.scheduler.schedule_at(copy.due, copy.key)
            return copy
        moved = self.store.reschedule(row.id, due, now, snooze=True, anchor=anchor)
        if moved is None:
            raise ReminderStateError("not_snoozable", status=row.status)
        self.scheduler.schedule_at(moved.due, moved.key)
        return moved

    def done(self, user_key: str, reminder_id: int) -> Reminder:
        """The user dealt with it; a recurring reminder simply waits for its next time."""
        row = self._mine(user_key, reminder_id)
        if row.recurrence:
            return row
        finished = self.store.done(row.id, self.clock())
        if finished is None:
            raise ReminderStateError("finished", status=row.status)
        self.scheduler.cancel(row.key)
        return finished

    # -- reading ---------------------------------------------------------------------------
    def listing(self, user_key: str) -> list[Listed]:
        """Proposed and scheduled reminders (and ones of unknown delivery), soonest first."""
        rows = self.store.of_user(user_key, (rs.PROPOSED, rs.SCHEDULED, rs.FIRING, rs.UNKNOWN))
        out = []
        for r in rows:
            rule = Recurrence.decode(r.recurrence) if r.recurrence else None
            out.append(Listed(r, r.due.astimezone(ZoneInfo(r.zone)), rule))
        return out

    def rang(self, user_key: str, since: datetime) -> list[Reminder]:
        """One-off reminders that rang since ``since`` and wait for Done (or a snooze), the
        latest first: what the memory page offers Done and Snooze for."""
        rows = self.store.of_user(user_key, (rs.SENT,))
        return [r for r in reversed(rows) if (r.sent_at or r.occurrence or r.due) >= since]

    def today(self, user_key: str) -> list[Listed]:
        """Scheduled reminders whose next time falls on the user's today."""
        today = self.clock().astimezone(self.zone(user_key)).date()
        return [
            item
            for item in self.listing(user_key)
            if item.reminder.status == rs.SCHEDULED and item.next_local.date() == today
        ]

    # -- firing ----------------------------------------------------------------------------
    def _next_due(self, row: Reminder, now: datetime) -> datetime | None:
        """A recurring reminder's next occurrence after both ``now`` and the one just due."""
        if not row.recurrence:
            return None
        rule = Recurrence.decode(row.recurrence)
        return rule.next_after(max(now, row.occurrence or row.due), ZoneInfo(row.zone))

    def _rearm(self, row: Reminder | None) -> None:
        if row is not None and row.status == rs.SCHEDULED:
            self.scheduler.schedule_at(row.due, row.key)

    async def fire(self, reminder_id: int) -> FireResult | None:
        """Send one reminder if it is due and this caller wins the claim; None otherwise."""
        if self.sender is None:
            return None
        now = self.clock()
        claimed = self.store.claim(reminder_id, now, self.config.early_seconds)
        if claimed is None:
            return None  # not due, cancelled, snoozed, or another wake-up already sent it
        late = now - claimed.due > self.config.late_after
        lang = self.language_of(claimed.user_key) if self.language_of is not None else "en"
        text = alert_text(claimed.text, claimed.due.astimezone(ZoneInfo(claimed.zone)), late, lang)
        try:
            message_id = await self.sender(claimed, text)
        except NotDeliveredError as exc:
            log.warning("reminder %s not delivered (%s); will retry", claimed.id, exc)
            retry = self.store.retry(
                claimed.id, self.clock() + self.config.retry_after, self.config.max_attempts
            )
            self._rearm(retry)
            status = "failed" if retry is not None and retry.status == rs.FAILED else "retry"
            return FireResult(retry or claimed, status, text)
        except Exception:
            # The message may have left before the error: never send it again.
            log.exception("sending reminder %s failed; its delivery is unknown", claimed.id)
            row = self.store.finish(
                claimed.id, self.clock(), "unknown", next_due=self._next_due(claimed, now)
            )
            self._rearm(row)
            return FireResult(row or claimed, "unknown", text)
        outcome = "late" if late else "sent"
        row = self.store.finish(
            claimed.id,
            self.clock(),
            outcome,
            next_due=self._next_due(claimed, now),
            message_id=str(message_id),
        )
        self._rearm(row)
        return FireResult(row or claimed, outcome, text)

    async def fire_due(self) -> list[FireResult]:
        """Fire every reminder due now (a poll: the terminal chat, or a safety net job)."""
        results = []
        for reminder_id in self.store.due_ids(self.clock()):
            row = self.store.by_id(reminder_id)
            if row is None or not self.owns(row.user_key):
                continue  # another process sends that user's reminders
            result = await self.fire(reminder_id)
            if result is not None:
                results.append(result)
        return results

    async def on_due(self, key: str) -> None:
        """The scheduler's callback: ``reminder:<id>`` or ``briefing:<user key>``."""
        kind, _, ident = key.partition(":")
        if kind == "reminder" and ident.isdigit():
            await self.fire(int(ident))
        elif kind == "briefing" and ident:
            await self.briefing_due(ident)
        else:
            log.warning("unknown reminder wake-up key %r", key)

    def expire_proposals(self) -> list[Reminder]:
        """Drop proposals nobody answered in time; each is returned once (for one notice)."""
        return self.store.expire_proposals(self.clock() - self.config.proposal_ttl)

    def start(self) -> StartReport:
        """Recover what a stopped process left, then schedule every scheduled reminder."""
        now = self.clock()
        uncertain = []
        for row in self.store.stuck():
            if not self.owns(row.user_key):
                continue  # another process may be sending it right now
            moved = self.store.finish(row.id, now, "unknown", next_due=self._next_due(row, now))
            if moved is not None:
                log.warning("reminder %s was being sent at shutdown: not re-sent", row.id)
                uncertain.append(moved)
        expired = self.expire_proposals()
        late = []
        rows = [r for r in self.store.in_status(rs.SCHEDULED) if self.owns(r.user_key)]
        for row in rows:
            if now - row.due > self.config.late_after:
                late.append(row)
            self.scheduler.schedule_at(max(row.due, now), row.key)
        briefings = self.schedule_briefings()
        return StartReport(len(rows), tuple(late), tuple(uncertain), tuple(expired), briefings)
