"""Telegram Mini App login: initData signed as Telegram signs it passes; altered or stale fails."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from urllib.parse import urlencode

import pytest

from bot.web.initdata import InitDataError, validate_init_data
from tests.web.conftest import ALICE, BOT_TOKEN, Page


def telegram_signs(fields: dict[str, str], bot_token: str = BOT_TOKEN) -> str:
    """initData as Telegram builds it (written out from its documentation, not our code)."""
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    signed = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": signed})


def fields_for(user_id: int, auth_date: float, lang: str = "zh-hant") -> dict[str, str]:
    user = {"id": user_id, "first_name": "Alice", "language_code": lang}
    return {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps(user, separators=(",", ":"), ensure_ascii=False),
        "auth_date": str(int(auth_date)),
        "signature": "bm90LWNoZWNrZWQtaGVyZQ",
    }


def test_data_signed_as_telegram_signs_it_names_the_user() -> None:
    now = time.time()
    user = validate_init_data(telegram_signs(fields_for(ALICE, now - 60)), BOT_TOKEN, now)
    assert (user.id, user.language_code) == (ALICE, "zh-hant")


@pytest.mark.parametrize(
    "change",
    [
        lambda q: q.replace("Alice", "Alicf"),  # the name altered
        lambda q: q.replace(str(ALICE), "222"),  # another user id
        lambda q: q.rsplit("&hash=", 1)[0],  # no hash
        lambda q: q[:-1] + ("0" if q[-1] != "0" else "1"),  # the hash altered
        lambda q: q + "&auth_date=1",  # a second auth_date
    ],
)
def test_altered_data_is_refused(change: object) -> None:
    now = time.time()
    good = telegram_signs(fields_for(ALICE, now))
    with pytest.raises(InitDataError):
        validate_init_data(change(good), BOT_TOKEN, now)  # type: ignore[operator]


def test_another_bots_data_is_refused() -> None:
    now = time.time()
    other = telegram_signs(fields_for(ALICE, now), bot_token="999:another-bot")
    with pytest.raises(InitDataError, match="signature"):
        validate_init_data(other, BOT_TOKEN, now)


def test_stale_or_future_data_is_refused() -> None:
    now = time.time()
    with pytest.raises(InitDataError, match="too old"):
        validate_init_data(telegram_signs(fields_for(ALICE, now - 2 * 86400)), BOT_TOKEN, now)
    with pytest.raises(InitDataError, match="too old"):
        validate_init_data(telegram_signs(fields_for(ALICE, now + 3600)), BOT_TOKEN, now)


def test_the_mini_app_logs_an_allowed_user_in(page: Page) -> None:
    client = page.client()
    init = telegram_signs(fields_for(ALICE, page.clock() - 5))
    r = client.post("/auth/telegram", data={"init_data": init})
    assert r.status_code == 200 and r.json() == {"ok": True}
    me = client.get("/me").json()
    assert me == {"user_key": f"telegram_{ALICE}", "lang": "zh"}


def test_the_mini_app_refuses_strangers_and_forgeries(page: Page) -> None:
    client = page.client()
    stranger = telegram_signs(fields_for(333, page.clock()))
    r = client.post("/auth/telegram", data={"init_data": stranger})
    assert r.status_code == 403 and "pcai_session" not in r.cookies
    forged = telegram_signs(fields_for(ALICE, page.clock()), bot_token="1:guess")
    r = client.post("/auth/telegram", data={"init_data": forged})
    assert r.status_code == 403
    assert client.get("/me", follow_redirects=False).status_code == 303  # not logged in
