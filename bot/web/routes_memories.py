"""The memories: list by section, search (with explain), one entry, and the writes on it."""

from __future__ import annotations

import asyncio
from datetime import datetime

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from bot.web import views
from bot.web.i18n import word
from bot.web.logins import PageSession
from bot.web.render import lang_of, render
from bot.web.routes_auth import safe_back
from bot.web.security import WebDeps, deps_of, page, write
from bot.web.shaping import EditForm, ShapeError, Shaper, shown
from memory.errors import EntryNotFoundError


def now_of(deps: WebDeps) -> datetime:
    """The deps' clock as an aware local time."""
    return datetime.fromtimestamp(deps.clock()).astimezone()


def entry_cache(request: Request) -> views.EntryCache:
    """The app's parsed-entries cache."""
    cache: views.EntryCache = request.app.state.entries
    return cache


def shaper_of(request: Request) -> Shaper:
    """The app's one :class:`Shaper`."""
    shaper: Shaper = request.app.state.shaper
    return shaper


@page
async def memories(request: Request, session: PageSession) -> Response:
    """Every memory by section (filtered, a page at a time), or the results of a search."""
    deps = deps_of(request)
    params = dict(request.query_params)
    filters = views.Filters.of(params)
    query = params.get("q", "").strip()[:500]
    explain = params.get("explain") == "1"
    user, now = session.user_key, now_of(deps)
    entries = await asyncio.to_thread(entry_cache(request).entries, user)
    try:
        page_no = int(params.get("page", "1"))
    except ValueError:
        page_no = 1
    listing = await asyncio.to_thread(deps.views.listing, user, entries, filters, page_no, now)
    hits: list[views.Hit] = []
    dropped: list[views.Drop] = []
    if query:
        result = await asyncio.to_thread(deps.views.search, user, query)
        hits = await asyncio.to_thread(deps.views.hits, user, result, entries, filters, now)
        dropped = views.drops(result) if explain else []
    shaper = shaper_of(request)
    return render(
        request,
        session,
        "memories.html",
        listing=listing,
        filters=filters,
        query=query,
        explain=explain,
        hits=hits,
        dropped=dropped,
        undo_label=await asyncio.to_thread(
            shaper.undo_label, user, now, lang_of(request, session)
        ),
        layers=views.LAYERS,
        statuses=("active", "low_priority", "archived", "deprecated"),
    )


@page
async def entry_page(request: Request, session: PageSession) -> Response:
    """One memory: its fields, the edit form, and its topic's timeline (supersedes chain).

    Opening it is the user's use of it (its access count; docs/retrieval.md), once: the page
    an act on the memory lands on (its flash waiting) is that act's, which counted already.
    """
    landing = bool(deps_of(request).flashes.get(session.session_id))
    return await _entry_view(request, session, _entry_id(request), used=not landing)


async def _entry_view(
    request: Request,
    session: PageSession,
    entry_id: str,
    draft: EditForm | None = None,
    error: str = "",
    *,
    used: bool = False,
) -> Response:
    """The entry page; after a refused edit, the form keeps what was typed, the error in red.
    ``used``: this view is a use of the memory (one more on its access count)."""
    deps = deps_of(request)
    user, now = session.user_key, now_of(deps)
    entries = await asyncio.to_thread(entry_cache(request).entries, user)
    entry = next((e for e in entries if e.id == entry_id), None)
    if entry is None:
        raise HTTPException(404)
    if used:
        await asyncio.to_thread(deps.governance.used, user, entry_id, now)
    [row] = await asyncio.to_thread(deps.views.rows, user, [entry], now)
    governance = deps.governance
    chain = await asyncio.to_thread(governance.archaeology, user, entry_id)
    topic_chain = []
    if row.entry.canonical_topic:
        topic_chain = await asyncio.to_thread(
            governance.archaeology, user, row.entry.canonical_topic
        )
    timeline = topic_chain if len(topic_chain) > len(chain) else chain
    return render(
        request,
        session,
        "entry.html",
        status_code=422 if error else 200,
        row=row,
        timeline=timeline,
        draft=draft,
        error=error,
        sections=sorted({e.section for e in entries}),
    )


def _entry_id(request: Request) -> str:
    return str(request.path_params["entry_id"])


def _back(entry_id: str) -> RedirectResponse:
    return RedirectResponse(f"/m/{entry_id}", status_code=303)


@write
async def edit(request: Request, session: PageSession, form: FormData) -> Response:
    """Save the edit form: a new text is a new version; fields change in place."""
    deps, lang = deps_of(request), lang_of(request, session)
    entry_id = _entry_id(request)
    edit_form = EditForm(
        text=str(form.get("text", "")),
        # a new section typed beside the list of the ones there are wins
        section=str(form.get("new_section", "")).strip() or str(form.get("section", "")),
        topic=str(form.get("topic", "")),
        weight=str(form.get("weight", "")),
        core=form.get("core") == "1",
        scope=str(form.get("scope", "")),
    )
    try:
        entry = await asyncio.to_thread(
            shaper_of(request).edit, session.user_key, entry_id, edit_form, now_of(deps)
        )
    except EntryNotFoundError as exc:
        raise HTTPException(404) from exc
    except ShapeError as exc:  # said on the same page, in red, nothing typed lost
        return await _entry_view(request, session, entry_id, edit_form, exc.said(lang))
    new = entry.id != entry_id
    deps.flash(session, word("new_version", lang) + entry.id if new else word("saved", lang))
    back = str(form.get("back", ""))
    if back:  # edited in the list: back to the list, where the new text stands
        return RedirectResponse(safe_back(back) + f"#e-{entry.id}", status_code=303)
    return _back(entry.id)


@write
async def pin(request: Request, session: PageSession, form: FormData) -> Response:
    """The chat's /pin (or unpin)."""
    on = form.get("on") == "1"
    return await _curate(
        request, session, "pin_on" if on else "pin_off", "pinned" if on else "unpinned"
    )


@write
async def forget(request: Request, session: PageSession, form: FormData) -> Response:
    """The chat's /forget; the page then offers Undo while the copy is kept."""
    deps, shaper = deps_of(request), shaper_of(request)
    try:
        await asyncio.to_thread(shaper.entry, session.user_key, _entry_id(request))
    except EntryNotFoundError as exc:
        raise HTTPException(404) from exc
    lang = lang_of(request, session)
    said = await shaper.forget(session.user_key, _entry_id(request), now_of(deps), lang)
    deps.flash(session, said.text)
    return RedirectResponse("/", status_code=303)


@page
async def forget_all_page(request: Request, session: PageSession) -> Response:
    """Delete all: how many, the export offered first, and that it is final."""
    deps = deps_of(request)
    entries = await asyncio.to_thread(deps.views.memory.entries, session.user_key)
    return render(request, session, "forget_all.html", count=len(shown(entries)))


@write
async def forget_all(request: Request, session: PageSession, form: FormData) -> Response:
    """Delete every memory, once the user confirmed the number the page showed them."""
    deps, lang = deps_of(request), lang_of(request, session)
    entries = await asyncio.to_thread(deps.views.memory.entries, session.user_key)
    if not entries or str(form.get("count", "")) != str(len(shown(entries))):
        # the list changed since the page asked (or nothing is left): ask again
        return RedirectResponse("/forget-all", status_code=303)
    gone, problem = await shaper_of(request).forget_all(session.user_key, now_of(deps), lang)
    if gone:
        deps.flash(session, word("forgot_all", lang).format(n=gone))
    if problem is not None:
        deps.flash(session, problem.text)
    return RedirectResponse("/", status_code=303)


@write
async def undo(request: Request, session: PageSession, form: FormData) -> Response:
    """The chat's /undo."""
    deps = deps_of(request)
    said = await shaper_of(request).undo(session.user_key, now_of(deps), lang_of(request, session))
    deps.flash(session, said.text)
    return RedirectResponse(safe_back(str(form.get("back", "/"))), status_code=303)


@write
async def restore(request: Request, session: PageSession, form: FormData) -> Response:
    """The chat's /restore: an archived (or low-priority, or replaced) entry is active again."""
    return await _curate(request, session, "restore", "restored")


@write
async def keep(request: Request, session: PageSession, form: FormData) -> Response:
    """Keep a fading memory: its recency starts again, its weight one step up."""
    return await _curate(request, session, "keep", "kept")


async def _curate(request: Request, session: PageSession, act: str, said: str) -> Response:
    deps, lang = deps_of(request), lang_of(request, session)
    entry_id = _entry_id(request)
    do = getattr(shaper_of(request), act)
    try:
        await asyncio.to_thread(do, session.user_key, entry_id)
    except EntryNotFoundError as exc:
        raise HTTPException(404) from exc
    except ShapeError as exc:
        deps.flash(session, exc.said(lang))
        return _back(entry_id)
    deps.flash(session, word(said, lang))
    return _back(entry_id)


ROUTES = [
    Route("/", memories, methods=["GET"]),
    Route("/m/{entry_id}", entry_page, methods=["GET"]),
    Route("/m/{entry_id}/edit", edit, methods=["POST"]),
    Route("/m/{entry_id}/pin", pin, methods=["POST"]),
    Route("/m/{entry_id}/forget", forget, methods=["POST"]),
    Route("/m/{entry_id}/restore", restore, methods=["POST"]),
    Route("/m/{entry_id}/keep", keep, methods=["POST"]),
    Route("/undo", undo, methods=["POST"]),
    Route("/forget-all", forget_all_page, methods=["GET"]),
    Route("/forget-all", forget_all, methods=["POST"]),
]
