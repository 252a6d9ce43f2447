"""The reminders on the page: the list, and done, snooze and delete, through the chat's desk.

Every act goes through the reminder desk the chat's buttons press (agent/reminders/desk.py):
the same act, said in the same words, noted for ``/undo`` (the page's Undo takes it back).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from agent.reminders.recurrence import Recurrence
from agent.reminders.texts import span_zh_en, when_en, when_zh
from agent.reminders.types import Reminder
from bot.web.i18n import word
from bot.web.logins import PageSession
from bot.web.render import lang_of, render
from bot.web.routes_memories import now_of, shaper_of
from bot.web.security import deps_of, page, write

# The page's buttons and the desk's press codes (the chat's buttons send the same).
ACTS = {"done": "k", "delete": "x", "10m": "10m", "1h": "1h", "tomorrow": "tm"}
RANG_FOR = timedelta(days=7)  # a reminder that rang is offered Done and Snooze for a week


@dataclass(frozen=True, slots=True)
class ReminderRow:
    """One reminder as the page lists it."""

    id: int
    text: str
    when: str  # its next time (or the time it rang), in the reader's language, its zone
    repeat: str  # its rule in words; "" for a one-off
    status: str
    recurring: bool


def _row(r: Reminder, at: datetime, lang: str) -> ReminderRow:
    local = at.astimezone(ZoneInfo(r.zone))
    when = word("reminder_when", lang).format(zh=when_zh(local), en=when_en(local), zone=r.zone)
    repeat = ""
    if r.recurrence:
        rule = Recurrence.decode(r.recurrence)
        repeat = word("reminder_repeat", lang).format(zh=rule.describe_zh(), en=rule.describe_en())
    return ReminderRow(r.id, r.text, when, repeat, str(r.status), bool(r.recurrence))


@page
async def reminders(request: Request, session: PageSession) -> Response:
    """The reminders still to come, and the ones that rang this week (Done, Snooze)."""
    deps, lang = deps_of(request), lang_of(request, session)
    service = deps.reminders
    coming: list[ReminderRow] = []
    rang: list[ReminderRow] = []
    if service is not None:
        user, since = session.user_key, now_of(deps) - RANG_FOR
        listed = await asyncio.to_thread(service.listing, user)
        coming = [_row(i.reminder, i.reminder.due, lang) for i in listed]
        rung = await asyncio.to_thread(service.rang, user, since)
        rang = [_row(r, r.occurrence or r.due, lang) for r in rung]
    zh, en = span_zh_en(service.snooze_length) if service is not None else ("", "")
    return render(
        request,
        session,
        "reminders.html",
        coming=coming,
        rang=rang,
        snooze_short=word("snooze_short", lang).format(zh=zh, en=en),
        undo_label=await asyncio.to_thread(
            shaper_of(request).undo_label, session.user_key, now_of(deps), lang
        ),
    )


@write
async def act(request: Request, session: PageSession, form: FormData) -> Response:
    """Done, a snooze or delete, pressed on the page: the chat's button, the same act."""
    deps, lang = deps_of(request), lang_of(request, session)
    code = ACTS.get(str(form.get("act", "")))
    desk = deps.reminder_desk
    rid = str(request.path_params["rid"])
    if code is None or desk is None or not rid.isascii() or not rid.isdigit():
        raise HTTPException(404)
    pressed = await desk.press(session.user_key, f"rm:{code}:{rid}", lang)
    # Delete's long text holds the whole list again: the page shows the list itself.
    deps.flash(session, pressed.toast if code == "x" else (pressed.text or pressed.toast))
    return RedirectResponse("/reminders", status_code=303)


ROUTES = [
    Route("/reminders", reminders, methods=["GET"]),
    Route("/reminders/{rid}", act, methods=["POST"]),
]
