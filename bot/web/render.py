"""Jinja2 rendering with autoescape on: every piece of memory text reaches HTML escaped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import HTMLResponse

from bot.frontdesk.texts import section_label
from bot.web.i18n import word
from bot.web.logins import PageSession
from bot.web.plain import Plain
from bot.web.security import deps_of

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

ENV = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=True,  # all templates, whatever their name
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def lang_of(request: Request, session: PageSession | None) -> str:
    """The session's language, else the browser's (zh for any Chinese), else English."""
    if session is not None and session.lang:
        return session.lang
    accept = request.headers.get("accept-language", "").lower()
    return "zh" if accept.startswith("zh") else "en"


def render(
    request: Request,
    session: PageSession | None,
    name: str,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    """Render template ``name`` for the session (nav, language, CSRF token, flashes)."""
    deps = deps_of(request)
    lang = lang_of(request, session)
    base: dict[str, Any] = {
        "lang": lang,
        "t": lambda key: word(key, lang),
        "plain": Plain(lang),
        "sec": lambda section: section_label(section, lang),  # "個人 Personal": the reader's half
        "session": session,
        "csrf": deps.signer.csrf(session.session_id) if session else "",
        "flashes": deps.flashes.pop(session.session_id, []) if session else [],
        "path": request.url.path,
        "here": str(request.url.path) + (f"?{request.url.query}" if request.url.query else ""),
    }
    html = ENV.get_template(name).render(**base, **context)
    return HTMLResponse(html, status_code=status_code)
