"""The page's guards, each in one place every route passes through.

- :func:`page` and :func:`write` wrap every route that shows or changes a user's data: no
  session, no page (a write without its CSRF token is refused before the handler runs), and
  the handler receives the session, whose user key scopes everything it reads or writes.
- :class:`SecurityHeaders` sets the Content-Security-Policy (no inline script, nothing from
  elsewhere) and friends on every response, static files and errors included.
- :class:`Throttle` slows repeated bad login attempts from one address.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.settings import WebConfig
from bot.web.logins import SESSION_SECONDS, LoginStore, PageSession
from bot.web.secret import Signer

if TYPE_CHECKING:
    from agent.reminders.desk import ReminderDesk
    from agent.reminders.service import ReminderService
    from bot.frontdesk.language import Languages
    from bot.web.shaping import Shaper
    from bot.web.views import PageViews
    from memory.write.decisions import ConfirmationService
    from memory.write.governance import Governance

COOKIE = "pcai_session"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; object-src 'none'; "
    "frame-ancestors 'self' https://web.telegram.org"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # a login link never leaks through a Referer
    (b"cache-control", b"no-store"),
    # For browsers without CSP frame-ancestors (newer ones let the CSP above win, so Telegram
    # Web can still frame the Mini App).
    (b"x-frame-options", b"SAMEORIGIN"),
]


class Throttle:
    """Slows bad login attempts per client address: past a few, each waits twice as long.

    A good link or initData always works (a guesser must not be able to lock the owner out);
    a bad one waits ``delay`` seconds, and once ``max_failures`` were made within the window,
    twice as long as the one before (up to ``max_delay``) and is answered 429.
    """

    def __init__(
        self,
        max_failures: int = 5,
        window_seconds: float = 900.0,
        delay_seconds: float = 0.5,
        max_delay_seconds: float = 30.0,
    ) -> None:
        self.max_failures = max_failures
        self.window = window_seconds
        self.delay = delay_seconds
        self.max_delay = max_delay_seconds
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._failures.get(client, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            self._failures.pop(client, None)  # strangers must not grow the map forever
        return times

    async def failed(self, client: str, now: float) -> bool:
        """Record a bad attempt and wait; True when ``client`` is past the limit."""
        times = self._recent(client, now)
        times.append(now)
        self._failures[client] = times
        over = len(times) - self.max_failures
        wait = self.delay if over <= 0 else min(self.delay * 2**over, self.max_delay)
        await asyncio.sleep(wait)
        return over > 0


@dataclass(slots=True)
class WebDeps:
    """What the routes need: the services they read and write, and the page's own state."""

    views: PageViews  # every read the pages show
    shaper: Shaper  # every write the page makes
    governance: Governance  # a memory's use and its timeline
    confirm: ConfirmationService  # the proposals waiting
    languages: Languages | None  # each person's one language; None: the client's
    data_dir: Path  # where web.url says which address this process serves
    config: WebConfig
    logins: LoginStore
    signer: Signer
    bot_token: str = ""
    allowed: frozenset[int] = frozenset()
    throttle: Throttle = field(default_factory=Throttle)
    clock: Callable[[], float] = time.time
    reminders: ReminderService | None = None  # the reminders page reads these
    reminder_desk: ReminderDesk | None = None  # and acts through the chat's desk
    # session id -> one-shot messages shown on the next page (kept in this process only)
    flashes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def secure_cookie(self) -> bool:
        """Only over https may the browser send the cookie (the public URL says which)."""
        return self.config.public_url.startswith("https://")

    def flash(self, session: PageSession, text: str) -> None:
        """Show ``text`` once on the session's next page."""
        self.flashes.setdefault(session.session_id, []).append(text)


def deps_of(request: Request) -> WebDeps:
    """The app's dependencies."""
    deps: WebDeps = request.app.state.deps
    return deps


def current_session(request: Request) -> PageSession | None:
    """The session the request's signed cookie names, if it is live."""
    deps = deps_of(request)
    signed = request.cookies.get(COOKIE, "")
    session_id = deps.signer.unsign(signed) if signed else None
    if not session_id:
        return None
    return deps.logins.session(session_id, deps.clock())


def set_session_cookie(response: Response, deps: WebDeps, session: PageSession) -> None:
    """Hand the browser its session: signed, HttpOnly, SameSite=Strict."""
    response.set_cookie(
        COOKIE,
        deps.signer.sign(session.session_id),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=deps.secure_cookie,
        path="/",
    )


PageHandler = Callable[[Request, PageSession], Awaitable[Response]]
WriteHandler = Callable[[Request, PageSession, FormData], Awaitable[Response]]
Endpoint = Callable[[Request], Awaitable[Response]]


def page(handler: PageHandler) -> Endpoint:
    """A page of the logged-in user; without a session the browser goes to the sign-in page."""

    async def endpoint(request: Request) -> Response:
        session = current_session(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        return await handler(request, session)

    endpoint.guarded = "page"  # type: ignore[attr-defined]
    return endpoint


def write(handler: WriteHandler) -> Endpoint:
    """A change made by the logged-in user: refused (403) without the session's CSRF token."""

    async def endpoint(request: Request) -> Response:
        session = current_session(request)
        if session is None:
            raise HTTPException(403, "not logged in")
        form = await request.form(max_files=1, max_fields=1000)
        token = form.get("csrf")
        if not isinstance(token, str) or not deps_of(request).signer.csrf_ok(
            session.session_id, token
        ):
            raise HTTPException(403, "missing or wrong CSRF token")
        return await handler(request, session, form)

    endpoint.guarded = "write"  # type: ignore[attr-defined]
    return endpoint


def credential(handler: Endpoint) -> Endpoint:
    """A login route: the request carries its own credential (a link token or initData)."""
    handler.guarded = "credential"  # type: ignore[attr-defined]
    return handler


def client_of(request: Request) -> str:
    """The address bad attempts are counted by."""
    return request.client.host if request.client else "?"


class SecurityHeaders:
    """Adds the CSP and the other headers to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass through, adding headers at the start of the response."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[Any] = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in HEADERS if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
