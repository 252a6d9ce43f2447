"""One-time links, the session cookie, logout and the slowing of bad attempts."""

from __future__ import annotations

import os
import sqlite3
import stat
import time

import pytest

from bot.web.logins import LINK_SECONDS
from bot.web.secret import SECRET_FILE
from tests.web.conftest import Page, csrf_of

ALICE = "telegram_111"


def test_a_link_logs_in_once(page: Page) -> None:
    token = page.deps.logins.issue(ALICE, page.clock(), "en")
    first = page.client()
    landing = first.get(f"/login?t={token}")  # a link preview fetches this: nothing is spent
    assert landing.status_code == 200 and 'src="/static/login.js"' in landing.text
    r = first.post("/login", data={"t": token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert first.get("/me").json()["user_key"] == ALICE
    second = page.client()
    r = second.post("/login", data={"t": token}, follow_redirects=False)
    assert r.status_code == 403 and "already used" in r.text
    assert second.get("/me", follow_redirects=False).status_code == 303


def test_an_expired_link_is_refused(page: Page) -> None:
    token = page.deps.logins.issue(ALICE, page.clock() - LINK_SECONDS - 1, "en")
    client = page.client()
    r = client.post("/login", data={"t": token}, follow_redirects=False)
    assert r.status_code == 403 and "expired" in r.text
    assert client.get("/me", follow_redirects=False).status_code == 303


def test_links_and_sessions_are_stored_hashed(page: Page) -> None:
    token = page.deps.logins.issue(ALICE, page.clock(), "en")
    client = page.client()
    client.post("/login", data={"t": token})
    cookie = client.cookies["pcai_session"]
    session_id = cookie.rpartition(".")[0]
    db = page.services.settings.state_db_path
    page.services.state.conn.execute("PRAGMA wal_checkpoint(FULL)")
    raw = b"".join(p.read_bytes() for p in db.parent.glob("pcai.db*") if p.is_file())
    assert token.encode() not in raw and session_id.encode() not in raw
    with sqlite3.connect(db) as conn:
        hashes = [r[0] for r in conn.execute("SELECT token_hash FROM web_login_links")]
    assert len(hashes) == 1 and len(hashes[0]) == 64


def test_the_cookie_is_signed_httponly_and_samesite_strict(page: Page) -> None:
    token = page.deps.logins.issue(ALICE, page.clock(), "en")
    r = page.client().post("/login", data={"t": token}, follow_redirects=False)
    header = r.headers["set-cookie"].lower()
    assert "httponly" in header and "samesite=strict" in header and "path=/" in header
    # A cookie with the right session id but a wrong signature opens nothing.
    session_id = r.cookies["pcai_session"].rpartition(".")[0]
    forged = page.client()
    forged.cookies.set("pcai_session", f"{session_id}.{'0' * 64}")
    assert forged.get("/me", follow_redirects=False).status_code == 303


def test_the_secret_file_is_the_owners_only(page: Page) -> None:
    path = page.services.settings.data_dir / SECRET_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_logout_ends_the_session(page: Page) -> None:
    client = page.login(ALICE)
    cookie = client.cookies["pcai_session"]
    home = client.get("/")
    r = client.post("/logout", data={"csrf": csrf_of(home.text)}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/signin"
    replay = page.client()
    replay.cookies.set("pcai_session", cookie)  # the old cookie, kept by someone
    assert replay.get("/me", follow_redirects=False).status_code == 303


def test_repeated_bad_attempts_are_slowed(page: Page) -> None:
    throttle = page.deps.throttle
    throttle.delay = 0.05
    client = page.client()
    for _ in range(throttle.max_failures):
        assert client.post("/login", data={"t": "guess"}).status_code == 403
    waits = []
    for _ in range(2):
        t0 = time.perf_counter()
        r = client.post("/login", data={"t": "guess"})
        waits.append(time.perf_counter() - t0)
        assert r.status_code == 429 and "Too many attempts" in r.text
    assert waits[0] >= 0.1 and waits[1] >= 0.2  # each past the limit waits twice as long
    # A guesser cannot lock the owner out: a real link still works from the same address.
    good = page.deps.logins.issue(ALICE, page.clock(), "en")
    assert client.post("/login", data={"t": good}, follow_redirects=False).status_code == 303
    page.clock.now = page.clock() + throttle.window + 1  # the window passes: back to 403
    assert client.post("/login", data={"t": "guess"}).status_code == 403


@pytest.mark.parametrize("lang,word", [("zh", "記憶"), ("en", "Memories")])
def test_the_link_carries_the_users_language_and_the_page_switches(
    page: Page, lang: str, word: str
) -> None:
    client = page.login(ALICE, lang)
    home = client.get("/")
    assert word in home.text
    other = "en" if lang == "zh" else "zh"
    client.post("/lang", data={"csrf": csrf_of(home.text), "lang": other, "back": "/pending"})
    assert client.get("/me").json()["lang"] == other
