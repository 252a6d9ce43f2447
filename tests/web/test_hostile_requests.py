"""The memory page against requests nobody scripted: each is a clear 4xx, never a 500.

Non-ASCII credentials, a replayed Mini App initData, framing, and imports that are malformed
in their second record, nested too deep or carry a huge number. Each test failed on the code
before the fix (a 500, a second login, a missing header, a half-import).
"""

from __future__ import annotations

import json

import pytest

from bot.web.security import COOKIE
from tests.web.conftest import ALICE, Page, csrf_of
from tests.web.test_initdata import fields_for, telegram_signs


def test_a_non_ascii_cookie_is_no_session(page: Page) -> None:
    client = page.client()
    cookie = f"{COOKIE}=abc.{'é' * 64}".encode()
    r = client.get("/me", headers={"cookie": cookie}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/signin"


def test_a_non_ascii_csrf_token_is_refused(page: Page) -> None:
    client = page.login(f"telegram_{ALICE}")
    r = client.post("/logout", data={"csrf": "é" * 64}, follow_redirects=False)
    assert r.status_code == 403
    assert client.get("/me").json()["user_key"] == f"telegram_{ALICE}"  # still logged in


def test_a_non_ascii_initdata_hash_is_refused_and_slowed_down(page: Page) -> None:
    client = page.client()
    fields = fields_for(ALICE, page.clock())
    init = telegram_signs(fields).rsplit("hash=", 1)[0] + "hash=" + "%C3%A9" * 64
    r = client.post("/auth/telegram", data={"init_data": init})
    assert r.status_code == 403 and r.json()["ok"] is False
    assert len(page.deps.throttle._recent("testclient", page.clock())) == 1  # counted


def test_one_initdata_logs_in_once(page: Page) -> None:
    init = telegram_signs(fields_for(ALICE, page.clock() - 5))
    first = page.client().post("/auth/telegram", data={"init_data": init})
    assert first.status_code == 200
    copy = page.client()  # someone who read the initData (a log, a shoulder, a proxy)
    r = copy.post("/auth/telegram", data={"init_data": init})
    assert r.status_code == 403 and "used already" in r.json()["error"]
    assert copy.get("/me", follow_redirects=False).status_code == 303


def test_every_response_forbids_framing_by_other_sites(page: Page) -> None:
    r = page.client().get("/signin")
    assert r.headers["x-frame-options"] == "SAMEORIGIN"
    assert (
        "frame-ancestors 'self' https://web.telegram.org" in r.headers["content-security-policy"]
    )


@pytest.mark.parametrize(
    ("second", "field"),
    [
        ({"text": "Second", "user_weight": "heavy"}, "user_weight"),
        ({"text": "Second", "user_weight": 1e999}, "user_weight"),  # a huge number: inf
        ({"text": "Second", "section": ["a", "list"]}, "section"),
        ({"text": "Second", "is_core": "yes"}, "is_core"),
        ({"text": 12}, "text"),
    ],
)
def test_an_import_with_a_bad_second_record_imports_nothing(
    page: Page, second: dict[str, object], field: str
) -> None:
    client = page.login(f"telegram_{ALICE}")
    token = csrf_of(client.get("/transfer").text)
    records = [{"text": "我的護照十二月到期"}, second, {"text": "Third"}]
    body = json.dumps(records, ensure_ascii=False).replace("Infinity", "1e999")
    files = {"file": ("backup.json", body, "application/json")}
    r = client.post("/import", data={"csrf": token}, files=files)
    assert r.status_code == 200
    assert f"Record 2 has a bad {field}: nothing in the file was imported." in r.text
    assert page.services.confirm.pending(f"telegram_{ALICE}") == []


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000 + "]" * 100_000,  # nested far deeper than the parser's stack
        '[{"text": "x", "user_weight": ' + "9" * 5000 + "}]",  # a 5,000-digit number
    ],
)
def test_json_nested_too_deep_or_with_a_huge_number_is_one_sentence(page: Page, body: str) -> None:
    client = page.login(f"telegram_{ALICE}")
    token = csrf_of(client.get("/transfer").text)
    files = {"file": ("backup.json", body, "application/json")}
    r = client.post("/import", data={"csrf": token}, files=files)
    assert r.status_code == 200 and "Cannot read that file" in r.text
    assert page.services.confirm.pending(f"telegram_{ALICE}") == []
