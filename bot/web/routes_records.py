"""The web's records: /why, daily logs and summaries, export and import."""

from __future__ import annotations

import asyncio
import json

from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from agent.selection import fallback_groups
from bot.web import views
from bot.web.i18n import word
from bot.web.logins import PageSession
from bot.web.render import lang_of, render
from bot.web.routes_memories import now_of, shaper_of
from bot.web.security import deps_of, page, write
from bot.web.shaping import MAX_IMPORT_BYTES, ShapeError
from memory.write.governance import chains_markdown, export_records


@page
async def why(request: Request, session: PageSession) -> Response:
    """The memories that shaped each recent reply, with links to the entries."""
    deps = deps_of(request)
    replies = await asyncio.to_thread(deps.views.why, session.user_key)
    entries = await asyncio.to_thread(deps.views.memory.entries, session.user_key)
    present = {e.id for e in entries}
    return render(
        request, session, "why.html", replies=replies, present=present, overview=fallback_groups
    )


@page
async def logs(request: Request, session: PageSession) -> Response:
    """The daily logs by day and the summaries; a search over both."""
    deps = deps_of(request)
    user = session.user_key
    query = request.query_params.get("q", "").strip()[:500]
    days = await asyncio.to_thread(deps.views.log_days, user)
    summaries = await asyncio.to_thread(deps.views.summaries, user)
    found: list[views.Hit] = []
    if query:
        result = await asyncio.to_thread(deps.views.search, user, query, 30)
        found = [
            h
            for h in deps.views.hits(user, result, [], views.Filters(), now_of(deps))
            if h.kind != "memory"
        ]
    return render(
        request, session, "logs.html", days=days, summaries=summaries, query=query, found=found
    )


@page
async def log_day(request: Request, session: PageSession) -> Response:
    """One day's log, record by record."""
    deps = deps_of(request)
    day = str(request.path_params["day"])
    records = await asyncio.to_thread(deps.views.log_records, session.user_key, day)
    if records is None:
        raise HTTPException(404)
    return render(request, session, "log_day.html", day=day, records=records)


@page
async def transfer(request: Request, session: PageSession) -> Response:
    """Export and import."""
    return render(request, session, "transfer.html")


def _download(body: str, name: str, media: str) -> Response:
    return Response(
        body,
        media_type=media,
        headers={"content-disposition": f'attachment; filename="{name}"'},
    )


@page
async def export_md(request: Request, session: PageSession) -> Response:
    """MEMORY.md as PCAI writes it, with the supersedes chains as comments."""
    memory = deps_of(request).views.memory
    md = await asyncio.to_thread(memory.export_markdown, session.user_key)
    entries = await asyncio.to_thread(memory.entries, session.user_key)
    return _download(md + chains_markdown(entries), "pcai-memory.md", "text/markdown")


@page
async def export_json(request: Request, session: PageSession) -> Response:
    """Every entry with its fields, chain links and use counts, as one JSON document."""
    reads = deps_of(request).views
    entries = await asyncio.to_thread(reads.memory.entries, session.user_key)
    stats = await asyncio.to_thread(reads.access.get_many, session.user_key)
    body = json.dumps(export_records(entries, stats), ensure_ascii=False, indent=2)
    return _download(body, "pcai-memory.json", "application/json")


@write
async def import_file(request: Request, session: PageSession, form: FormData) -> Response:
    """Turn an uploaded Markdown or JSON file into proposals (nothing is written yet)."""
    deps, lang = deps_of(request), lang_of(request, session)
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        deps.flash(session, word("import_empty", lang))
        return RedirectResponse("/transfer", status_code=303)
    data = await upload.read(MAX_IMPORT_BYTES + 1)  # more than that is refused, unread
    try:
        report = await asyncio.to_thread(
            shaper_of(request).import_file,
            session.user_key,
            upload.filename or "",
            data,
            now_of(deps),
        )
    except ShapeError as exc:
        deps.flash(session, exc.said(lang))
        return RedirectResponse("/transfer", status_code=303)
    if not report.proposed and not report.refused:
        deps.flash(session, word("import_empty", lang))
        return RedirectResponse("/transfer", status_code=303)
    deps.flash(session, word("imported", lang) % (len(report.proposed), len(report.refused)))
    for text, why in report.refused[:20]:
        deps.flash(session, f"{text} — {why.said(lang)}")
    return RedirectResponse("/pending", status_code=303)


ROUTES = [
    Route("/why", why, methods=["GET"]),
    Route("/logs", logs, methods=["GET"]),
    Route("/logs/{day}", log_day, methods=["GET"]),
    Route("/transfer", transfer, methods=["GET"]),
    Route("/export.md", export_md, methods=["GET"]),
    Route("/export.json", export_json, methods=["GET"]),
    Route("/import", import_file, methods=["POST"]),
]
