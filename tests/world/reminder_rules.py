"""The person's reminders: ``/remind`` (an instant, "in 30 minutes", or a clock time, "tomorrow
at 9"), answering the model's proposals, snooze, done, cancel, and ``/tz``. Each reminder must
be stored once, at the instant the person meant (read back from ``pcai.db``).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import strategies as st
from hypothesis.stateful import rule

from tests.world.base import now
from tests.world.memory_rules import MemoryRules, having, on, people
from tests.world.person import Kept, Person, Reminder, instant, kept_in_files
from tests.world.texts import REMINDER_TEXTS, ZONES, secret_values

SLACK = timedelta(seconds=2)


def phrase(lang: str, clock: bool, minutes: int, text: str) -> str:
    """What the person types after /remind."""
    if lang == "zh":
        return f"明天早上九點 {text}" if clock else f"{minutes}分鐘後 {text}"
    return f"tomorrow at 9 {text}" if clock else f"in {minutes} minutes {text}"


def tomorrow_at_nine(person: Person, t: datetime) -> datetime:
    """Tomorrow 09:00 where the person is, as of ``t``."""
    day = t.astimezone(person.tz).date() + timedelta(days=1)
    return datetime.combine(day, time(9), tzinfo=person.tz)


class ReminderRules(MemoryRules):
    """Reminders and the zone."""

    def reminder_command(self, key: str, name: str, arg: str) -> str:
        """``/name arg`` through the reminder desk; the cards' texts, joined."""
        front = self.front(key)
        cards = self.call(f"/{name} {arg!r}", front.reminders.command(key, name, arg, front.lang))
        return "\n".join(c.text for c in cards)

    @on("remind")
    @rule(
        key=people,
        clock=st.booleans(),
        minutes=st.sampled_from((2, 30, 90)),
        text=st.sampled_from(REMINDER_TEXTS),
        secret=st.none() | secret_values,
    )
    def remind(self, key: str, clock: bool, minutes: int, text: str, secret: str | None) -> None:
        """``/remind in 30 minutes …`` or ``/remind tomorrow at 9 …``: set at once."""
        person = self.people[key]
        if secret is not None:
            text, person.secrets = f"{text}, my password is {secret}", person.secrets | {secret}
        before, (kept, state) = self.rows(key), person.before_act()
        t0 = now()
        said = self.reminder_command(key, "remind", phrase(person.lang, clock, minutes, text))
        t1 = now()
        made = [r for i, r in self.rows(key).items() if i not in before]
        assert len(made) <= 1, f"one /remind made {[(r.id, r.text) for r in made]}"
        if not made:
            return
        r = made[0]
        assert r.status == "scheduled", f"/remind left #{r.id} {r.status}: {said!r}"
        if clock:
            meant = {instant(tomorrow_at_nine(person, t)) for t in (t0, t1)}
            assert instant(r.due) in meant, f"'tomorrow at 9' in {person.tz.key} rings {r.due}"
        else:
            low, high = t0 + timedelta(minutes=minutes), t1 + timedelta(minutes=minutes)
            assert low - SLACK <= r.due <= high + SLACK, (
                f"'in {minutes} minutes' said at {t0:%H:%M:%S} UTC rings at {r.due}"
            )
        person.reminders[r.id] = Reminder(r.id, r.text, r.due, clock, person.tz.key)
        person.acted(f"/remind {phrase(person.lang, clock, minutes, text)}", kept, state, r.id)

    @on("reminder_answer", having("proposed"))
    @rule(data=st.data(), yes=st.booleans())
    def reminder_answer(self, data: st.DataObject, yes: bool) -> None:
        """The person confirms or discards a reminder the model proposed."""
        person = self.pick(data, "proposed")
        rid = data.draw(st.sampled_from(sorted(person.proposed)))
        proposal = person.proposed.pop(rid)
        kept, state = person.before_act()
        verb = "confirm" if yes else "discard"
        said = self.reminder_command(person.key, "reminders", f"{verb} {rid}")
        row = self.rows(person.key)[rid]
        if not yes or row.status != "scheduled":
            assert row.status != "scheduled", f"/reminders discard {rid} set it: {said!r}"
            return
        # Proposed before a /tz, it may ring at its clock time in the new zone, or keep its moment.
        wall = proposal.due.astimezone(ZoneInfo(proposal.zone)).replace(tzinfo=None)
        meant = {instant(proposal.due), instant(wall.replace(tzinfo=person.tz))}
        assert instant(row.due) in meant, (
            f"reminder #{rid} proposed for {proposal.due} in {proposal.zone} rings at {row.due}"
        )
        person.reminders[rid] = Reminder(rid, row.text, row.due, True, row.zone)
        person.acted(f"/reminders confirm {rid}", kept, state, rid)

    @on("snooze", having("reminders"))
    @rule(data=st.data(), choice=st.sampled_from(("10m", "1h", "tomorrow")))
    def snooze(self, data: st.DataObject, choice: str) -> None:
        """``/reminders snooze <id> 10m|1h|tomorrow``."""
        person = self.pick(data, "reminders")
        rid = data.draw(st.sampled_from(sorted(person.reminders)))
        kept, state = person.before_act()
        t0 = now()
        said = self.reminder_command(person.key, "reminders", f"snooze {rid} {choice}")
        self.snoozed(person, rid, choice, (t0, now()), said, (kept, state))

    def snoozed(
        self,
        person: Person,
        rid: int,
        choice: str,
        span: tuple[datetime, datetime],
        said: str,
        before: tuple[Kept, dict[str, object]],
    ) -> None:
        """Check and learn a snooze of reminder ``rid`` asked between ``span``'s two times."""
        t0, t1 = span
        row = self.rows(person.key)[rid]
        r = person.reminders[rid]
        if row.due == r.due:
            assert row.status == "scheduled", f"snoozing #{rid} left it {row.status}: {said!r}"
            return  # not snoozed (said why)
        if choice == "tomorrow":
            assert t1 < row.due <= t1 + timedelta(hours=49), f"snoozed to tomorrow: {row.due}"
            r.clock, r.zone = True, row.zone
        else:
            length = self.front(person.key).reminders.service.snooze_length
            step = length if choice == "10m" else timedelta(hours=1)
            assert t0 + step - SLACK <= row.due <= t1 + step + SLACK, (
                f"snooze {choice} at {t0:%H:%M:%S} UTC rings at {row.due}: {said!r}"
            )
            r.clock = False
        r.due = row.due
        person.acted(f"snoozing reminder #{rid} {choice}", *before, rid)

    @on("done", having("reminders"))
    @rule(data=st.data(), verb=st.sampled_from(("done", "cancel")))
    def done(self, data: st.DataObject, verb: str) -> None:
        """``/reminders done <id>`` or ``cancel <id>``: it never rings."""
        person = self.pick(data, "reminders")
        rid = data.draw(st.sampled_from(sorted(person.reminders)))
        kept, state = person.before_act()
        said = self.reminder_command(person.key, "reminders", f"{verb} {rid}")
        self.ended(person, rid, verb, said, (kept, state))

    def ended(
        self,
        person: Person,
        rid: int,
        verb: str,
        said: str,
        before: tuple[Kept, dict[str, object]],
    ) -> None:
        """Check and learn that reminder ``rid`` was marked done or cancelled: it never rings."""
        row = self.rows(person.key)[rid]
        assert row.status != "scheduled", f"{verb} of reminder #{rid}: {said!r}, still scheduled"
        del person.reminders[rid]
        person.acted(f"{verb} reminder #{rid}", *before, rid)

    @on("tz")
    @rule(key=people, zone=st.sampled_from(ZONES))
    def tz(self, key: str, zone: str) -> None:
        """``/tz <zone>``: clock times move to the new zone; instants stay where they are."""
        person = self.people[key]
        kept, state = person.before_act()
        t0 = now()
        said = self.reminder_command(key, "tz", zone)
        t1 = now()
        rows = self.rows(key)
        for rid in person.moved(zone, t0):
            # Passed in the new zone: it keeps its moment, or rings at once (and says so).
            if rid in rows and rows[rid].due <= t1 + SLACK:
                person.reminders[rid].due = rows[rid].due
        got = kept_in_files(self.data, key)
        assert got == person.kept(), (
            f"/tz {zone} ({said!r}): the person meant {person.kept()}, the files hold {got}"
        )
        person.acted(f"/tz {zone}", kept, state)
