"""The memory page of the world's process, reached as a browser reaches it.

The page is the real Starlette app (``bot.web.app``) over the running process's services,
driven in-process through HTTP requests (httpx's ASGI transport, on the machine's own event
loop, as uvicorn runs it beside the bot): each person logs in with a one-time link as
``pcai web-link`` gives it, and every write carries the session's CSRF token from the page.
"""

from __future__ import annotations

import html
import re
import time

import httpx

from bot.app import Services
from bot.web.app import build_app, build_deps
from bot.web.security import Throttle

BASE = "http://127.0.0.1:8765"
CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')
COUNT = re.compile(r'name="count" value="(\d+)"')
FLASH = re.compile(r'<p class="flash" role="status">(.*?)</p>', re.S)
UNDO = re.compile(r'<button type="submit" id="undo">([^<]*)</button>')


class Page:
    """One person's browser on the page of one process (logged in on first use)."""

    def __init__(self, services: Services, user_key: str, lang: str) -> None:
        deps = build_deps(services, throttle=Throttle(delay_seconds=0.0))
        self.deps, self.user_key, self.lang = deps, user_key, lang
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(deps)), base_url=BASE
        )
        self.token = ""

    async def _login(self) -> None:
        link = self.deps.logins.issue(self.user_key, time.time(), self.lang)
        r = await self.client.post("/login", data={"t": link})
        assert r.status_code == 303, f"the login link of {self.user_key} was refused: {r.text}"

    async def get(self, path: str) -> str:
        """The page at ``path`` (its HTML); the session's CSRF token is learned from it."""
        if not self.client.cookies:
            await self._login()
        r = await self.client.get(path, follow_redirects=True)
        assert r.status_code == 200, f"GET {path} answered {r.status_code}: {r.text[:300]}"
        found = CSRF.search(r.text)
        if found:
            self.token = found.group(1)
        return r.text

    async def post(self, path: str, data: dict[str, str], *, back: str = "/") -> str:
        """A form of the page sent (the redirect followed); the HTML the person then sees."""
        if not self.token:
            await self.get(back)
        r = await self.client.post(path, data={"csrf": self.token, **data}, follow_redirects=True)
        assert r.status_code == 200, f"POST {path} {data} answered {r.status_code}: {r.text[:300]}"
        return r.text

    async def close(self) -> None:
        """Close the browser."""
        await self.client.aclose()


def undo_label(page_html: str) -> str:
    """The words of the page's Undo button ("" when it offers none)."""
    found = UNDO.search(page_html)
    return html.unescape(found.group(1)).strip() if found else ""


def forget_all_count(page_html: str) -> int | None:
    """The number of memories the Delete-all confirmation names (None: it offers no button)."""
    found = COUNT.search(page_html)
    return int(found.group(1)) if found else None


def flashes(page_html: str) -> list[str]:
    """The sentences the page said after a form (its flash messages)."""
    return [html.unescape(m) for m in FLASH.findall(page_html)]
