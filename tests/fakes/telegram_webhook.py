"""The stand-in's webhook delivery: after ``setWebhook`` it POSTs each update to the bot.

As Telegram does: one update per request, oldest first, JSON with ``Content-Type:
application/json`` and, when ``setWebhook`` gave one, the ``X-Telegram-Bot-Api-Secret-Token``
header; an update leaves the queue only when the bot answers 2xx, and a refused or failed post
is tried again (after a short pause here, where Telegram waits longer) and kept as the
webhook's ``last_error_message``.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")  # Telegram's rule for secret_token
RETRY_SECONDS = 0.2


@dataclass(frozen=True, slots=True)
class Hook:
    """One bot's webhook as ``setWebhook`` set it."""

    url: str
    secret_token: str = ""


def post_update(hook: Hook, update: dict[str, Any], timeout: float = 10) -> str:
    """POST ``update`` to ``hook``; "" when the bot took it, else Telegram's error text."""
    headers = {"Content-Type": "application/json"}
    if hook.secret_token:
        headers["X-Telegram-Bot-Api-Secret-Token"] = hook.secret_token
    body = json.dumps(update, ensure_ascii=False).encode()
    request = urllib.request.Request(hook.url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as err:
        return f"Wrong response from the webhook: {err.code} {err.reason}"
    except (urllib.error.URLError, OSError) as err:
        return f"Connection failed: {getattr(err, 'reason', err)}"
    return ""
