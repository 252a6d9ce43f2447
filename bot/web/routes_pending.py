"""The web's pending proposals: the list, one answer, a batch answer and a typed addition."""

from __future__ import annotations

import asyncio
import logging

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from agent.texts import say
from bot.frontdesk.ports import Decision, Outcome
from bot.web import views
from bot.web.i18n import word
from bot.web.logins import PageSession
from bot.web.render import lang_of, render
from bot.web.routes_memories import now_of, shaper_of
from bot.web.security import deps_of, page, write
from bot.web.shaping import ShapeError

log = logging.getLogger(__name__)
DECISIONS: dict[str, Decision] = {"confirm": "confirm", "replace": "replace", "discard": "reject"}


@page
async def pending(request: Request, session: PageSession) -> Response:
    """The proposals waiting for the user, with the time each has left."""
    deps, lang = deps_of(request), lang_of(request, session)
    now = now_of(deps)
    waiting = await asyncio.to_thread(deps.confirm.pending, session.user_key, now)
    shown = [
        (
            p,
            views.minutes_left(p, now),
            say("conflict", lang, shown=p.conflicts_shown) if p.conflicts_shown else "",
        )
        for p in waiting
    ]
    return render(request, session, "pending.html", waiting=shown)


def _said(outcome: Outcome, lang: str) -> str:
    if outcome.status in ("confirmed", "rejected"):
        suffix = f" ({outcome.entry_id})" if outcome.entry_id else ""
        return word(outcome.status, lang) + outcome.text + suffix
    return word(outcome.status, lang)


@write
async def answer(request: Request, session: PageSession, form: FormData) -> Response:
    """Confirm, replace, discard or edit one proposal: the user's own act on the page."""
    deps, lang, shaper = deps_of(request), lang_of(request, session), shaper_of(request)
    proposal_id = str(request.path_params["proposal_id"])
    action = str(request.path_params["action"])
    try:
        if action == "edit":
            text = str(form.get("text", ""))
            outcome = await asyncio.to_thread(
                shaper.edit_proposal, session.user_key, proposal_id, text
            )
        elif action in DECISIONS:
            outcome = await asyncio.to_thread(
                shaper.decide, session.user_key, proposal_id, DECISIONS[action]
            )
        else:
            raise HTTPException(404)
    except ShapeError as exc:
        deps.flash(session, exc.said(lang))
        return RedirectResponse("/pending", status_code=303)
    if outcome.status == "missing":
        raise HTTPException(404)  # unknown, already answered, or someone else's
    deps.flash(session, _said(outcome, lang))
    return RedirectResponse("/pending", status_code=303)


@write
async def batch(request: Request, session: PageSession, form: FormData) -> Response:
    """Confirm or discard every ticked proposal (an import is confirmed this way)."""
    deps, lang, shaper = deps_of(request), lang_of(request, session), shaper_of(request)
    decision: Decision = "reject" if form.get("action") == "discard" else "confirm"
    for proposal_id in [str(v) for v in form.getlist("ids")][:500]:
        outcome = await asyncio.to_thread(shaper.decide, session.user_key, proposal_id, decision)
        deps.flash(session, _said(outcome, lang))
    return RedirectResponse("/pending", status_code=303)


@write
async def add(request: Request, session: PageSession, form: FormData) -> Response:
    """Add a memory typed on the page: the same guards as chat; the press is the user's act."""
    deps, lang, shaper = deps_of(request), lang_of(request, session), shaper_of(request)
    text, section = str(form.get("text", "")).strip(), str(form.get("section", "")).strip()
    try:
        outcome = await asyncio.to_thread(shaper.add, session.user_key, text, section)
    except ShapeError as exc:
        deps.flash(session, exc.said(lang))
        return RedirectResponse("/", status_code=303)
    except Exception:  # a bug of ours: logged, and one sentence instead of a 500
        log.exception("adding a memory typed on the page failed for %s", session.user_key)
        deps.flash(session, word("add_failed", lang))
        return RedirectResponse("/", status_code=303)
    if outcome.status == "edited":  # close to a memory: the user picks add or replace
        deps.flash(session, word("add_conflict", lang))
        return RedirectResponse("/pending", status_code=303)
    deps.flash(session, _said(outcome, lang))
    return RedirectResponse("/", status_code=303)


ROUTES = [
    Route("/pending", pending, methods=["GET"]),
    Route("/pending/batch", batch, methods=["POST"]),
    Route("/pending/{proposal_id}/{action}", answer, methods=["POST"]),
    Route("/add", add, methods=["POST"]),
]
