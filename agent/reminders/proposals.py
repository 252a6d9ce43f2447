"""Making reminder proposals: from a ``/remind`` phrase, the model's ISO time, or a memory's date.

A proposal is a stored row in ``proposed``; nothing rings until its owner confirms it (see
:class:`agent.reminders.service.ReminderService`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from agent.reminders.dates import DateOffer, find_recurring_date
from agent.reminders.errors import ReminderInPastError, ReminderStateError, parse_error
from agent.reminders.parse import MAX_AHEAD, MAX_TEXT, ParsedReminder, parse_reminder
from agent.reminders.recurrence import Recurrence, rule_for
from agent.reminders.store import WALL, Reminder, ReminderStatus, ReminderStore
from agent.reminders.texts import understood_en, understood_zh
from agent.types import ReminderView
from memory.base.guards import mask


class ProposalsMixin:
    """Proposal methods of :class:`agent.reminders.service.ReminderService`."""

    store: ReminderStore
    clock: Callable[[], datetime]
    zone: Callable[[str], ZoneInfo]

    def parse(self, user_key: str, phrase: str) -> ParsedReminder:
        """Parse a ``/remind`` phrase in the user's zone (:class:`ParseError` if it can't)."""
        return parse_reminder(phrase, self.clock(), self.zone(user_key))

    def propose(
        self,
        user_key: str,
        text: str,
        due: datetime,
        rule: Recurrence | None = None,
        source: str = "",
        anchor: str = WALL,
    ) -> Reminder:
        """Store a proposal; nothing is scheduled until the user confirms it.

        ``anchor`` says whether ``due`` is a clock time (a change of zone keeps the clock
        time) or a moment ("in 30 minutes": a change of zone never moves it).
        """
        text = " ".join(text.split())
        if not text or len(text) > MAX_TEXT:
            raise ReminderStateError("text_length")
        now = self.clock()
        if due.tzinfo is None:
            raise ValueError("the due time must be timezone-aware")
        if rule is None and due <= now:
            raise ReminderInPastError("time_passed")
        if due - now > MAX_AHEAD:  # the model's "9999-12-31": one sentence, not a traceback
            raise parse_error("too_far")
        zone = self.zone(user_key)
        return self.store.add(
            user_key,
            text,
            due=due,
            zone=zone.key,
            now=now,
            recurrence=rule.encode() if rule else "",
            source=source,
            anchor=WALL if rule else anchor,
        )

    def propose_phrase(self, user_key: str, phrase: str) -> tuple[Reminder, ParsedReminder]:
        """``/remind <when> <text>``: parse, then propose what was understood."""
        parsed = self.parse(user_key, phrase)
        row = self.propose(
            user_key, parsed.text, parsed.due, parsed.recurrence, "/remind", parsed.anchor
        )
        return row, parsed

    def propose_iso(
        self,
        user_key: str,
        when: str,
        text: str,
        recurrence: str | None = None,
        source: str = "tool",
    ) -> Reminder:
        """The model's ``reminder_create``: an ISO time (naive = the user's zone) and a kind.

        A ``source`` naming the message (``tool:<message id>``) proposes once: the same
        reminder from the same message (a turn answered again after a crash) is the row made
        the first time.
        """
        try:
            due = datetime.fromisoformat(when.strip())
        except ValueError:
            raise ReminderStateError("not_iso", when=when) from None
        zone = self.zone(user_key)
        try:
            due = due.replace(tzinfo=zone) if due.tzinfo is None else due.astimezone(zone)
            if due - self.clock() > MAX_AHEAD:
                raise parse_error("too_far")
            rule = None
            if recurrence:
                try:
                    rule = rule_for(recurrence.strip().lower(), due)
                except ValueError:
                    raise ReminderStateError("bad_repeat") from None
                due = rule.next_after(self.clock() - timedelta(seconds=1), zone, due.date())
        except OverflowError:  # a time at the very end of year 9999, moved into the zone
            raise parse_error("too_far") from None
        same = self._proposed(user_key, text, due, rule, source) if ":" in source else None
        return same or self.propose(user_key, text, due, rule, source)

    def _proposed(
        self, user_key: str, text: str, due: datetime, rule: Recurrence | None, source: str
    ) -> Reminder | None:
        """The proposal ``source`` already made of this reminder, still waiting, if any."""
        said = (source, mask(" ".join(text.split())), due, rule.encode() if rule else "")
        waiting = self.store.of_user(user_key, (ReminderStatus.PROPOSED,))
        return next((r for r in waiting if (r.source, r.text, r.due, r.recurrence) == said), None)

    def view(self, row: Reminder) -> ReminderView:
        """A proposal as the transport shows it: what was understood, in zh and en."""
        due = row.due.astimezone(ZoneInfo(row.zone))
        rule = Recurrence.decode(row.recurrence) if row.recurrence else None
        return ReminderView(
            row.id,
            row.text,
            understood_zh(due, row.text, rule, row.zone),
            understood_en(due, row.text, rule, row.zone),
            row.number,
        )

    def offer_for_memory(
        self, user_key: str, memory_text: str, source: str = "memory"
    ) -> tuple[Reminder, DateOffer] | None:
        """A confirmed memory naming a birthday or anniversary: propose the day-before reminder."""
        offer = find_recurring_date(memory_text)
        if offer is None:
            return None
        due = offer.rule.next_after(self.clock(), self.zone(user_key))
        return self.propose(user_key, offer.text, due, offer.rule, source), offer
