"""Logging in (one-time link, Telegram Mini App), switching language, logging out."""

from __future__ import annotations

import asyncio

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from bot.frontdesk.language import client_language
from bot.web.initdata import (
    FUTURE_SLACK_SECONDS,
    MAX_AGE_SECONDS,
    InitDataError,
    validate_init_data,
)
from bot.web.logins import LANGS, PageSession
from bot.web.render import render
from bot.web.security import (
    COOKIE,
    WebDeps,
    client_of,
    credential,
    current_session,
    deps_of,
    page,
    set_session_cookie,
    write,
)


def person_language(deps: WebDeps, user_key: str, code: str) -> str:
    """The person's one language (bot/frontdesk/language.py): chosen or last written, else the
    client's (Telegram's language code, the browser's Accept-Language), else English."""
    if deps.languages is not None:
        return deps.languages.of(user_key, code[:35] or None)
    return client_language(code) or "en"


async def signin(request: Request) -> Response:
    """How to get a login link (no session needed)."""
    if current_session(request) is not None:
        return RedirectResponse("/", status_code=303)
    return render(request, None, "signin.html")


async def login_form(request: Request) -> Response:
    """The link's landing page: a form that spends the token only when posted.

    Link previews and scanners fetch with GET; spending the token there would lose it before
    the person opens it. A small script of ours posts the form at once.
    """
    token = request.query_params.get("t", "")[:200]
    return render(request, None, "login.html", token=token)


@credential
async def login(request: Request) -> Response:
    """Spend a login link: a session and its cookie, or one sentence why not."""
    deps = deps_of(request)
    client, now = client_of(request), deps.clock()
    form = await request.form(max_files=0, max_fields=5)
    token = form.get("t")
    redeemed = await asyncio.to_thread(
        deps.logins.redeem, token if isinstance(token, str) else "", now
    )
    if redeemed.refusal is not None:
        if await deps.throttle.failed(client, now):
            return render(request, None, "signin.html", 429, problem="too_many")
        return render(request, None, "signin.html", 403, problem=f"link_{redeemed.refusal}")
    # No language with the link (pcai web-link): the person's, else the browser's.
    lang = redeemed.lang or await asyncio.to_thread(
        person_language, deps, redeemed.user_key, request.headers.get("accept-language", "")
    )
    session = await asyncio.to_thread(deps.logins.open_session, redeemed.user_key, lang, now)
    response = RedirectResponse("/", status_code=303)
    set_session_cookie(response, deps, session)
    return response


async def mini_app(request: Request) -> Response:
    """The Mini App's start page: our script sends Telegram's initData to be checked."""
    return render(request, None, "tg.html")


@credential
async def telegram_login(request: Request) -> Response:
    """Log in with the Mini App's ``initData``: signed by Telegram for this bot, recent."""
    deps = deps_of(request)
    client, now = client_of(request), deps.clock()
    form = await request.form(max_files=0, max_fields=5)
    init_data = form.get("init_data")
    try:
        user = validate_init_data(
            init_data if isinstance(init_data, str) else "", deps.bot_token, now
        )
        if user.id not in deps.allowed:
            raise InitDataError("this bot does not serve you")
        until = user.auth_date + MAX_AGE_SECONDS + FUTURE_SLACK_SECONDS
        if not await asyncio.to_thread(deps.logins.spend_init_data, user.signature, now, until):
            raise InitDataError("this initData was used already: open the page from Telegram")
    except InitDataError as exc:
        code = 429 if await deps.throttle.failed(client, now) else 403
        return JSONResponse({"ok": False, "error": str(exc)}, status_code=code)
    key = f"telegram_{user.id}"
    lang = await asyncio.to_thread(person_language, deps, key, user.language_code)
    session = await asyncio.to_thread(deps.logins.open_session, key, lang, now)
    response = JSONResponse({"ok": True})
    set_session_cookie(response, deps, session)
    return response


@write
async def logout(request: Request, session: PageSession, form: FormData) -> Response:
    """End the session: its cookie opens nothing any more."""
    await asyncio.to_thread(deps_of(request).logins.end_session, session.session_id)
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


@write
async def switch_lang(request: Request, session: PageSession, form: FormData) -> Response:
    """Switch the page's language, back to the page it was switched on."""
    lang = str(form.get("lang", ""))
    if lang in LANGS:
        deps = deps_of(request)
        await asyncio.to_thread(deps.logins.set_lang, session.session_id, lang)
        if deps.languages is not None:  # the person's choice, in the chat too
            await asyncio.to_thread(deps.languages.choose, session.user_key, lang)
    return RedirectResponse(safe_back(str(form.get("back", "/"))), status_code=303)


@page
async def whoami(request: Request, session: PageSession) -> Response:
    """Who this session is (for scripts and tests): the user key only."""
    return JSONResponse({"user_key": session.user_key, "lang": session.lang})


def safe_back(path: str) -> str:
    """A path on this site to return to; anything else goes home."""
    if not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return path


ROUTES = [
    Route("/signin", signin, methods=["GET"]),
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/tg", mini_app, methods=["GET"]),
    Route("/auth/telegram", telegram_login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/lang", switch_lang, methods=["POST"]),
    Route("/me", whoami, methods=["GET"]),
]
