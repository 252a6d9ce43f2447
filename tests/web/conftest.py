"""Fixtures for the memory page: the real app over real services on a temporary data dir."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.app import Services, build_services
from bot.settings import Settings, load_settings
from bot.web.app import build_app, build_deps
from bot.web.security import Throttle, WebDeps
from memory.index.embedders import E5Embedder

BOT_TOKEN = "123456:TEST-token-for-the-page"
ALICE, BOB = 111, 222
CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


@dataclass
class Clock:
    """The time (seconds since the epoch): the real one until a test sets ``now``."""

    now: float | None = None

    def __call__(self) -> float:
        return time.time() if self.now is None else self.now


@dataclass
class Page:
    """The app, its dependencies and the clock, over one data dir."""

    services: Services
    deps: WebDeps
    app: Starlette
    clock: Clock

    def client(self) -> TestClient:
        """A fresh browser (no cookies)."""
        return TestClient(self.app, base_url="http://127.0.0.1:8765")

    def login(self, user_key: str, lang: str = "en") -> TestClient:
        """A browser logged in as ``user_key`` through a one-time link."""
        client = self.client()
        token = self.deps.logins.issue(user_key, self.clock(), lang)
        r = client.post("/login", data={"t": token}, follow_redirects=False)
        assert r.status_code == 303, r.text
        return client

    def remember(
        self, user_key: str, text: str, section: str | None = None, **fields: object
    ) -> str:
        """A confirmed memory, written the way the operator's `pcai remember` does."""
        now = datetime.now().astimezone()
        p = self.services.confirm.propose(
            user_key, text, "operator", section=section, now=now, fields=fields
        )
        act = self.services.user_acts.act(user_key, p.id, "confirm", via="operator")
        return self.services.confirm.confirm(act, now=now).id


def csrf_of(html: str) -> str:
    """The CSRF token a page carries."""
    m = CSRF.search(html)
    assert m, "the page has no CSRF token"
    return m.group(1)


@pytest.fixture
def web_settings(tmp_path: Path) -> Settings:
    """Settings with a bot token and two allowed Telegram users."""
    return load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
            "PCAI_ALLOWED_USERS": f"{ALICE},{BOB}",
            "PCAI_WEB_PORT": "0",
        }
    )


@pytest.fixture
def page(web_settings: Settings, embedder: E5Embedder) -> Iterator[Page]:
    """The memory page over freshly built services."""
    services = build_services(web_settings, embedder=embedder)
    services.memory.ensure_index()
    clock = Clock()
    deps = build_deps(services, throttle=Throttle(delay_seconds=0.0), clock=clock)
    yield Page(services, deps, build_app(deps), clock)
    services.close()
