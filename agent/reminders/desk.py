"""Reminder commands, buttons and answers both front ends share, as plain data (no Telegram).

``/remind``, ``/reminders``, ``/tz`` and ``/briefing`` and every reminder button come here and
leave as :class:`Card` values: a text, its buttons (each with the command a terminal user types
instead), and what a bare "yes" / "no" typed after it answers. Confirming or discarding a
proposal is the user's act: the desk holds the bot layer's mint and seals each answer (a press,
a reply, a word, a command) for that one reminder, so the reminder service can tell it from
anything the model could make. A ``/remind`` the user types is such an act: set at once, with
↩️ Undo (``ud:reminder:<id>``, or ``/undo``), which cancels it. Every other act on a reminder
(set, snooze, done, cancel, ``/tz``) is noted for ``/undo`` too, which puts back what it changed
(agent/reminders/acts.py); discarding a proposal is noted as an act ``/undo`` cannot take back.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Literal
from zoneinfo import ZoneInfo

from agent.ids import number_id
from agent.reminders import acts as reminder_acts
from agent.reminders import store as rs
from agent.reminders.cards import Button, Card, Pressed
from agent.reminders.dates import DateOffer, find_recurring_date
from agent.reminders.errors import ReminderError, ReminderNotFoundError
from agent.reminders.morning import BriefingWriter
from agent.reminders.service import ReminderService
from agent.reminders.store import Reminder
from agent.reminders.texts import span_zh_en, when_en, when_zh
from agent.reminders.zones import zone_change_text
from agent.texts import say, short, undo_label
from agent.types import ReminderView
from memory.store.service import MemoryService

REMINDER_COMMANDS = ("remind", "reminders", "tz", "briefing")
Via = Literal["button", "reply", "word", "command"]

# The person's own answer to a reminder proposal, sealed by the bot layer (its mint of user
# acts): the agent package never holds the mint, so nothing the model does can confirm.
Seal = Callable[[str, int, bool, Via], Any]
SNOOZE_CODES = {"10m": "10m", "1h": "1h", "tm": "tomorrow"}
MAX_LISTED = 20  # buttons under one listing
MAX_TIED = 500  # message -> proposal links kept for replies (proposals live 30 minutes)


# Notes an act on reminders for /undo: (user, act, what it changed) -> its minutes.
NoteAct = Callable[[str, str, dict[str, Any]], int]
# The act each code of a press is ("d", discarding a proposal, cannot be taken back).
_ACT_OF = {"c": "set", "x": "cancel", "k": "done", **dict.fromkeys(SNOOZE_CODES, "snooze")}


def _shown(raw: str) -> str:
    """A typed word quoted back: short, on one line."""
    word = " ".join(raw.split())
    return word if len(word) <= 24 else word[:23] + "…"


class ReminderDesk:
    """Runs one reminder command or button for one user and says what happened."""

    def __init__(
        self,
        service: ReminderService,
        seal: Seal,
        memory: MemoryService,
        writer: BriefingWriter | None = None,
        note_made: Callable[[str, str], int] | None = None,  # for /undo: its minutes back
        note_act: NoteAct | None = None,  # an act on reminders, for /undo (agent/forget.py)
    ) -> None:
        self.service = service
        self.note_made = note_made
        self.note_act = note_act
        self._seal = seal
        self.memory = memory
        self.writer = writer
        self._tied: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._offers: dict[str, list[tuple[str, DateOffer]]] = {}
        # Each person's language for what a job sends (alerts); None: English.
        self.language_of: Callable[[str], str] | None = None

    # -- commands --------------------------------------------------------------------------
    async def command(self, user_key: str, name: str, arg: str, lang: str) -> list[Card]:
        """Run ``/name arg`` (one of :data:`REMINDER_COMMANDS`)."""
        arg = arg.strip()
        try:
            if name == "remind":
                return [await self._remind(user_key, arg, lang)]
            if name == "reminders":
                return await self._reminders(user_key, arg, lang)
            if name == "tz":
                return [await self._tz(user_key, arg, lang)]
            if name == "briefing":
                return [await self._briefing(user_key, arg, lang)]
        except ReminderError as exc:
            return [Card(exc.text(lang))]
        return [Card(say("reminder_unknown_command", lang))]

    async def _remind(self, user_key: str, arg: str, lang: str) -> Card:
        if not arg:
            return Card(say("usage_remind", lang))
        row, _ = await asyncio.to_thread(self.service.propose_phrase, user_key, arg)
        # Typed by the user, it is their act: set at once by the path ✅ takes, with Undo
        # (what the model proposes still waits for ✅).
        pressed = await self._on_reminder(user_key, "c", row.id, lang, "command")
        made = f"reminder:{row.id}"
        minutes = await asyncio.to_thread(self.note_made, user_key, made) if self.note_made else 0
        # The button names what it takes back, before it is pressed.
        what = say("act_remind_text", lang, reminder_id=row.id, text=short(row.text))
        undo = Button(undo_label(what, lang), f"ud:{made}", "/undo")
        said = say("reminder_set_now", lang, said=pressed.text, minutes=minutes)
        return Card(said, ((undo,),)) if minutes else Card(pressed.text)

    async def _reminders(self, user_key: str, arg: str, lang: str) -> list[Card]:
        verb, _, rest = arg.partition(" ")
        parts = rest.split()
        if verb.lower() == "offer" and parts:  # the typed twin of "remind me the day before"
            pressed = await self.press(user_key, f"rm:b:{parts[0]}", lang, via="command")
            return [Card(pressed.text or pressed.toast)]
        code = {"confirm": "c", "discard": "d", "cancel": "x", "done": "k"}.get(verb.lower())
        if not parts or (code is None and verb.lower() != "snooze"):
            return [await self.listing(user_key, lang)]
        number = number_id(parts[0])
        if number is None:  # "/reminders confirm ²": not a number the list shows
            return [Card(say("not_a_reminder_id", lang, what=_shown(parts[0])))]
        # A typed number is the person's own (#1 their first); the row inside has its own id.
        row = await asyncio.to_thread(self.service.store.numbered, user_key, number)
        if row is None:
            return [Card(ReminderNotFoundError("not_found", reminder_id=number).text(lang))]
        rid = row.id
        if verb.lower() == "snooze":
            choice = parts[1].lower() if len(parts) > 1 else "10m"
            code = {"tomorrow": "tm", "10m": "10m", "1h": "1h"}.get(choice)
        if code is None:
            return [await self.listing(user_key, lang)]
        pressed = await self.press(user_key, f"rm:{code}:{rid}", lang, via="command")
        return [Card(pressed.text or pressed.toast, pressed.buttons), *pressed.cards]

    async def _tz(self, user_key: str, arg: str, lang: str) -> Card:
        if not arg:
            zone = await asyncio.to_thread(self.service.zone, user_key)
            return Card(say("reminder_tz_now", lang, zone=zone.key))
        before = await asyncio.to_thread(reminder_acts.snapshot, self.service, user_key)
        change = await asyncio.to_thread(self.service.change_zone, user_key, arg)
        await self._noted(user_key, "tz", before, None)
        return Card(zone_change_text(change, lang))

    async def _noted(
        self, user_key: str, act: str, before: reminder_acts.Snapshot, target: int | None
    ) -> None:
        """Note for /undo what the act just done changed (one that changed nothing too)."""
        if self.note_act is None:
            return
        after = await asyncio.to_thread(reminder_acts.snapshot, self.service, user_key)
        note = reminder_acts.changes(before, after, target)
        if note:
            await asyncio.to_thread(self.note_act, user_key, act, note)
        elif self.note_made is not None:
            await asyncio.to_thread(self.note_made, user_key, f"unchanged:{act}")

    async def _briefing(self, user_key: str, arg: str, lang: str) -> Card:
        if arg.lower() in ("now", "現在", "现在"):
            if self.writer is None:
                return Card(say("reminder_briefing_unavailable", lang))
            return Card(await self.writer.write(user_key, lang=lang))
        if not arg:
            at = self.service.store.users.settings(user_key).briefing_at
            now = (
                say("reminder_briefing_daily", lang, at=at)
                if at
                else say("reminder_briefing_off", lang)
            )
            return Card(say("reminder_briefing_status", lang, now=now))
        settings = await asyncio.to_thread(self.service.set_briefing, user_key, arg)
        if not settings.briefing_at:
            return Card(say("reminder_briefing_turned_off", lang))
        return Card(say("reminder_briefing_set", lang, at=settings.briefing_at))

    # -- cards -----------------------------------------------------------------------------
    def proposal_card(self, view: ReminderView, lang: str) -> Card:
        """A proposal with ✅ / 🗑 (a bare yes / no typed next answers it too)."""
        rid, number = view.reminder_id, view.number or view.reminder_id
        # Both readings go in; the catalogue's sentence for ``lang`` takes its own.
        understood = {"understood_zh": view.understood_zh, "understood_en": view.understood_en}
        text = say("reminder_proposal", lang, rid=number, **understood)
        hint = say("reminder_proposal_hint", lang)
        confirm, discard = (
            say("reminder_button_confirm", lang),
            say("reminder_button_discard", lang),
        )
        row = (
            Button(confirm, f"rm:c:{rid}", f"/reminders confirm {number}"),
            Button(discard, f"rm:d:{rid}", f"/reminders discard {number}"),
        )
        return Card(text, (row,), answers=f"r:{rid}", hint=hint)

    def alert_card(self, reminder: Reminder, text: str) -> Card:
        """A reminder ringing, with Done and the three snoozes, in its owner's language (a job
        sends it: bot/frontdesk/language.py's rule, English when nothing is known)."""
        rid, number = reminder.id, reminder.number or reminder.id
        lang = self.language_of(reminder.user_key) if self.language_of is not None else "en"
        zh, en = span_zh_en(self.service.snooze_length)
        snooze = f"/reminders snooze {number}"
        short = say("reminder_button_snooze", lang, span_zh=zh, span_en=en)
        done = say("reminder_button_done", lang)
        return Card(
            text,
            (
                (Button(done, f"rm:k:{rid}", f"/reminders done {number}"),),
                (
                    Button(short, f"rm:10m:{rid}", f"{snooze} 10m"),
                    Button(say("reminder_button_hour", lang), f"rm:1h:{rid}", f"{snooze} 1h"),
                    Button(
                        say("reminder_button_tomorrow", lang), f"rm:tm:{rid}", f"{snooze} tomorrow"
                    ),
                ),
            ),
        )

    async def listing(self, user_key: str, lang: str) -> Card:
        """``/reminders``: every live reminder (recurring ones at their next time), to cancel."""
        listed = await asyncio.to_thread(self.service.listing, user_key)
        if not listed:
            return Card(say("reminder_none", lang))
        head = say("reminder_list_head", lang)
        rows = tuple(
            (
                Button(
                    say("reminder_button_cancel", lang, rid=i.reminder.number),
                    f"rm:x:{i.reminder.id}",
                    f"/reminders cancel {i.reminder.number}",
                ),
            )
            for i in listed[:MAX_LISTED]
        )
        return Card("\n".join([head, *(i.line(lang) for i in listed)]), rows)

    # -- presses and answers ---------------------------------------------------------------
    def _act(self, user_key: str, rid: int, yes: bool, via: Via) -> Any:
        return self._seal(user_key, rid, yes, via)

    async def press(self, user_key: str, data: str, lang: str, via: Via = "button") -> Pressed:
        """Run the button whose callback data is ``data`` for its presser."""
        _, code, arg = [*data.split(":", 2), "", ""][:3]
        try:
            before = await asyncio.to_thread(reminder_acts.snapshot, self.service, user_key)
            if code == "b":  # the reminder it sets is a new row (no target)
                pressed = await self._birthday(user_key, arg, lang, via)
                await self._noted(user_key, "set", before, -1)
                return pressed
            rid = number_id(arg)
            if rid is None:
                return Pressed(say("reminder_button_stale", lang), "")
            pressed = await self._on_reminder(user_key, code, rid, lang, via)
            if code == "d" and self.note_made is not None:  # the last act, not taken back
                await asyncio.to_thread(self.note_made, user_key, f"final:reminder_discard:{rid}")
            elif code in _ACT_OF:
                await self._noted(user_key, _ACT_OF[code], before, rid)
            return pressed
        except ReminderError as exc:
            said = exc.text(lang)
            return Pressed(said, said)

    async def _on_reminder(
        self, user_key: str, code: str, rid: int, lang: str, via: Via
    ) -> Pressed:
        service = self.service
        if code in ("c", "d"):
            act = self._act(user_key, rid, code == "c", via)
            if code == "c":
                row = await asyncio.to_thread(service.confirm, act, user_key, rid)
                view = service.view(row)
                understood = {
                    "understood_zh": view.understood_zh,
                    "understood_en": view.understood_en,
                }
                said = say("reminder_set", lang, **understood)
                return Pressed(say("reminder_set_toast", lang), said)
            row = await asyncio.to_thread(service.reject, act, user_key, rid)
            said = say("reminder_dropped", lang, text=row.text)
            return Pressed(said, said)
        if code == "x":
            row = await asyncio.to_thread(service.cancel, user_key, rid)
            fresh = await self.listing(user_key, lang)
            toast = say("reminder_cancelled", lang, rid=row.number, text=row.text)
            return Pressed(toast, f"{toast}\n\n{fresh.text}", fresh.buttons)
        if code == "k":
            row = await asyncio.to_thread(service.done, user_key, rid)
            said = say("reminder_done", lang, text=row.text)
            return Pressed(said, said)
        if code in SNOOZE_CODES:
            row = await asyncio.to_thread(service.snooze, user_key, rid, SNOOZE_CODES[code])
            local = row.due.astimezone(ZoneInfo(row.zone))
            when = {"when_zh": when_zh(local), "when_en": when_en(local)}
            said = say("reminder_snoozed", lang, text=row.text, **when)
            return Pressed(say("reminder_snoozed_toast", lang), said)
        return Pressed(say("reminder_button_stale", lang), "")

    def coming(self, user_key: str) -> int:
        """How many of the user's reminders are set to ring (what /stats counts as pending)."""
        return len(self.service.store.of_user(user_key, (rs.SCHEDULED,)))

    def waiting(self, user_key: str) -> tuple[ReminderView, ...]:
        """The user's reminder proposals waiting for an answer, soonest first."""
        rows = self.service.store.of_user(user_key, (rs.PROPOSED,))
        return tuple(self.service.view(row) for row in rows)

    async def answer(
        self, user_key: str, answers: str, yes: bool, lang: str, via: Via
    ) -> Pressed | None:
        """A reply or a bare word answering the card that showed ``answers``; None if stale.

        A bare word with several reminder proposals waiting asks which, as it does for
        memories, and shows them again; a reply names its proposal.
        """
        kind, _, ident = answers.partition(":")
        rid = number_id(ident)
        if kind == "r" and rid is not None:
            row = await asyncio.to_thread(self.service.store.by_id, rid)
            if row is None or row.user_key != user_key or row.status != rs.PROPOSED:
                return None
            waiting = await asyncio.to_thread(self.waiting, user_key)
            if via == "word" and len(waiting) > 1:
                ask = say("reminder_which", lang)
                cards = tuple(self.proposal_card(view, lang) for view in waiting)
                return Pressed(ask, ask, cards=cards)
            return await self.press(user_key, f"rm:{'c' if yes else 'd'}:{ident}", lang, via)
        if kind == "b" and ident:
            if yes:
                return await self.press(user_key, f"rm:b:{ident}", lang, via)
            said = say("reminder_not_wanted", lang)
            return Pressed(said, said)
        return None

    async def _birthday(self, user_key: str, entry_id: str, lang: str, via: Via) -> Pressed:
        """The user's press on "remind me the day before?": propose, then confirm with it."""
        entry = next((e for e in self.memory.entries(user_key) if e.id == entry_id), None)
        if entry is None:
            said = say("reminder_memory_gone", lang)
            return Pressed(said, said)
        source = f"memory:{entry_id}"
        live = await asyncio.to_thread(self.service.store.of_user, user_key, (rs.SCHEDULED,))
        if any(r.source == source for r in live):
            said = say("reminder_already_set", lang)
            return Pressed(said, said)
        made = await asyncio.to_thread(self.service.offer_for_memory, user_key, entry.text, source)
        if made is None:
            said = say("reminder_no_date", lang)
            return Pressed(said, said)
        row, _ = made
        # The press that asked for it is the user's act: seal it for the new proposal.
        return await self._on_reminder(user_key, "c", row.id, lang, via)

    # -- replies and birthday offers -------------------------------------------------------
    def tie(self, user_key: str, message_id: str, answers: str) -> None:
        """Remember that a transport message shows ``answers`` (for a reply to it)."""
        self._tied[(user_key, message_id)] = answers
        while len(self._tied) > MAX_TIED:
            self._tied.popitem(last=False)

    def tied(self, user_key: str, message_id: str) -> str | None:
        """What a reply to ``message_id`` answers, if that message showed a proposal."""
        return self._tied.get((user_key, message_id))

    def note_confirmed(self, user_key: str, entry_id: str, text: str) -> None:
        """A memory was confirmed: if it names a yearly date, offer the day-before reminder."""
        offer = find_recurring_date(text)
        if offer is not None and entry_id:
            self._offers.setdefault(user_key, []).append((entry_id, offer))

    def take_offers(self, user_key: str, lang: str) -> list[Card]:
        """The birthday offers waiting to be shown to ``user_key`` (each shown once)."""
        cards = []
        for entry_id, offer in self._offers.pop(user_key, []):
            asked = {"question_zh": offer.question_zh, "question_en": offer.question_en}
            question = say("reminder_offer", lang, **asked)
            button = Button(
                say("reminder_offer_button", lang),
                f"rm:b:{entry_id}"[:64],
                f"/reminders offer {entry_id}",
            )
            cards.append(Card(question, ((button,),), answers=f"b:{entry_id}"))
        return cards
