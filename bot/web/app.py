"""The memory page's ASGI app over one process's services (the same objects as the chat)."""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from agent.why import WhyLog
from bot.app import Services
from bot.frontdesk.reminder_desk import reminder_desk_for
from bot.web import (
    routes_auth,
    routes_memories,
    routes_pending,
    routes_records,
    routes_reminders,
)
from bot.web.logins import LoginStore
from bot.web.render import STATIC, render
from bot.web.secret import Signer, load_secret
from bot.web.security import SecurityHeaders, Throttle, WebDeps, current_session
from bot.web.shaping import Shaper
from bot.web.views import EntryCache, PageViews

ERRORS = {403: "forbidden", 404: "not_found", 405: "not_found"}


def build_deps(
    services: Services,
    *,
    throttle: Throttle | None = None,
    clock: Callable[[], float] = time.time,
) -> WebDeps:
    """The page's dependencies for ``services`` (secret from the data dir, logins in pcai.db).

    The bag stops here: the page gets the single services it uses."""
    settings = services.settings
    views = PageViews(
        memory=services.memory,
        access=services.access,
        sessions=services.sessions,
        why_log=WhyLog(services.state),
        daily_log=services.daily_log,
        lifecycle=settings.lifecycle,
        min_core_weight=settings.budget.l0_min_user_weight,
    )
    return WebDeps(
        views=views,
        shaper=Shaper(services),
        governance=services.governance,
        confirm=services.confirm,
        languages=services.languages,
        data_dir=settings.data_dir,
        config=settings.web,
        logins=LoginStore(services.state),
        signer=Signer(load_secret(settings.data_dir)),
        bot_token=settings.telegram_bot_token,
        allowed=frozenset(settings.allowed_users),
        throttle=throttle or Throttle(),
        clock=clock,
        reminders=services.reminders,
        reminder_desk=reminder_desk_for(services),
    )


async def _error(request: Request, exc: Exception) -> Response:
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    key = ERRORS.get(code, "forbidden")
    return render(request, current_session(request), "error.html", code, problem=key)


def build_app(deps: WebDeps) -> Starlette:
    """The Starlette app: every route, the static files, the headers on every response."""
    routes = [
        *routes_auth.ROUTES,
        *routes_memories.ROUTES,
        *routes_pending.ROUTES,
        *routes_records.ROUTES,
        *routes_reminders.ROUTES,
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={HTTPException: _error},
    )
    app.state.deps = deps
    app.state.shaper = deps.shaper
    app.state.entries = EntryCache(deps.views.memory)
    return app
