"""Versions on the page: one card per memory, Restore picks the chain's current version,
a new version keeps its predecessor's use, and only what really fades offers Keep."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta

from memory.base.markdown import parse_memory
from tests.web.conftest import Page, csrf_of

ALICE = "telegram_111"
TEA = "I prefer oolong tea in the afternoon"
GREEN = "I prefer green tea in the afternoon now"
ID = re.compile(r"m-\d{8}-[0-9a-f]{8}")


def _entries(page: Page) -> dict[str, tuple[str, str]]:
    text = page.services.memory.paths(ALICE).memory_md.read_text(encoding="utf-8")
    return {e.id: (e.text, str(e.status)) for e in parse_memory(text).entries}


def _cards(html: str) -> list[str]:
    return re.findall(r'<p class="text">([^<]+)</p>', html)


def _edit(page: Page, entry_id: str, text: str) -> str:
    client = page.login(ALICE)
    token = csrf_of(client.get("/").text)  # the list: opening the entry would count a use
    r = client.post(
        f"/m/{entry_id}/edit",
        data={"csrf": token, "text": text, "weight": "5", "scope": "global"},
        follow_redirects=False,
    )
    assert r.status_code == 303
    return str(r.headers["location"]).removeprefix("/m/")


def test_restoring_a_replaced_version_makes_it_the_current_one(page: Page) -> None:
    old = page.remember(ALICE, TEA)
    new = _edit(page, old, GREEN)
    client = page.login(ALICE)
    assert _cards(client.get("/").text) == [GREEN]  # one memory, not two versions
    assert _cards(client.get("/", params={"status": "deprecated"}).text) == [TEA]

    html = client.get(f"/m/{old}").text
    assert 'class="restore"' in html
    client.post(f"/m/{old}/restore", data={"csrf": csrf_of(html)})

    assert _entries(page) == {old: (TEA, "active"), new: (GREEN, "deprecated")}
    assert _cards(client.get("/").text) == [TEA]
    [restored] = [e for e in page.services.memory.entries(ALICE) if e.id == old]
    assert restored.history[-1].endswith("deprecated -> active: restored")


def test_a_new_version_keeps_the_id_form_and_the_use_of_the_old_one(page: Page) -> None:
    old = page.remember(ALICE, TEA)
    now = datetime.now().astimezone()
    for _ in range(3):
        page.services.access.bump(ALICE, [old], now)
    new = _edit(page, old, GREEN)

    assert ID.fullmatch(old) and ID.fullmatch(new)
    assert page.services.access.get(ALICE, new).count == 4  # the old one's 3, and the edit
    html = page.login(ALICE).get("/").text
    assert "<dt>uses</dt><dd>4</dd>" in html


def test_only_a_memory_that_fades_this_week_offers_keep(page: Page) -> None:
    fresh = page.remember(ALICE, TEA)  # fades in 57 days at today's rate: not yet fading
    client = page.login(ALICE)
    assert 'class="keep"' not in client.get("/").text
    _edit(page, fresh, GREEN)
    assert 'class="keep"' not in client.get("/").text  # the new version is not fading either

    memory = page.services.memory
    doc = memory.document(ALICE)
    [current] = [e for e in doc.entries if e.status == "active"]
    # The edit was one use: at today's rate the new version fades on day 81, not 57.
    long_ago = (datetime.now().astimezone() - timedelta(days=78)).isoformat(timespec="seconds")
    memory.write_document(ALICE, doc.with_entry(replace(current, created_at=long_ago)))
    assert 'class="keep"' in client.get("/").text  # below the line within the week
