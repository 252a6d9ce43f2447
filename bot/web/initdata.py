"""Telegram Mini App login: validate ``initData`` as Telegram documents it.

    secret_key = HMAC_SHA256(key="WebAppData", msg=bot_token)
    data_check_string = "\\n".join(sorted("key=value" for every field except hash))
    valid when hex(HMAC_SHA256(key=secret_key, msg=data_check_string)) == hash

and ``auth_date`` is recent (a day by default) and not in the future. One initData logs in
once (:meth:`~bot.web.logins.LoginStore.spend_init_data`): a copy of it opens nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import parse_qsl

MAX_AGE_SECONDS = 24 * 3600
FUTURE_SLACK_SECONDS = 60


class InitDataError(ValueError):
    """The initData is not Telegram's, was altered, or is too old."""


@dataclass(frozen=True, slots=True)
class WebAppUser:
    """The Telegram user a valid initData names."""

    id: int
    language_code: str
    auth_date: int
    signature: str = ""  # the initData's hash: what makes one login with it the only one


def secret_key(bot_token: str) -> bytes:
    """The key Telegram signs a bot's initData with."""
    return hmac.new(b"WebAppData", bot_token.encode("utf-8"), hashlib.sha256).digest()


def check_string(fields: dict[str, str]) -> str:
    """The data-check-string: every field but ``hash`` as ``key=value``, sorted, one a line."""
    return "\n".join(f"{k}={v}" for k, v in sorted(fields.items()) if k != "hash")


def validate_init_data(
    init_data: str, bot_token: str, now: float, max_age: float = MAX_AGE_SECONDS
) -> WebAppUser:
    """The user of ``init_data`` if Telegram signed it for this bot recently; raise otherwise."""
    if not bot_token:
        raise InitDataError("this bot has no token, so it cannot check Telegram's signature")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError as exc:
        raise InitDataError("initData is not a query string") from exc
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise InitDataError("initData repeats a field")
    given = fields.get("hash", "")
    want = hmac.new(secret_key(bot_token), check_string(fields).encode(), hashlib.sha256)
    if (
        not given.isascii()
        or not hmac.compare_digest(given.lower(), want.hexdigest())
        or not given
    ):
        raise InitDataError("initData's signature does not match: altered or not Telegram's")
    try:
        auth_date = int(fields["auth_date"])
        user = json.loads(fields["user"])
        user_id = int(user["id"])
    except (KeyError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise InitDataError("initData lacks auth_date or the user") from exc
    if auth_date > now + FUTURE_SLACK_SECONDS or now - auth_date > max_age:
        raise InitDataError("initData is too old (or from the future): open the page again")
    return WebAppUser(user_id, str(user.get("language_code") or ""), auth_date, given.lower())
