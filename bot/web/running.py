"""The memory page a running ``pcai run`` serves on a data folder, seen from another process.

``pcai run`` writes the address it really serves (its port may be 0, or behind a proxy) to
``<data dir>/web.url`` while the page runs, and holds the data folder's service lock for its
whole life. A second process on the same folder (``pcai web-link``, ``pcai chat`` beside the
service) finds the page there, and issues login links to it as rows of the shared ``pcai.db``.
The lock is what tells a live service from a ``web.url`` a killed one left behind.
"""

from __future__ import annotations

import time
from pathlib import Path

from bot.web.logins import LoginStore
from memory.base.locks import ServiceLock
from memory.errors import DataDirBusyError

WEB_URL_FILE = "web.url"


def running_page_url(data_dir: Path) -> str | None:
    """The address in ``web.url`` (what a running ``pcai run`` serves), or None."""
    try:
        url = (data_dir / WEB_URL_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return url or None


def service_running(data_dir: Path) -> bool:
    """Whether a ``pcai run`` holds ``data_dir`` now (its lock is taken)."""
    try:
        ServiceLock(data_dir).acquire().release()
    except DataDirBusyError:
        return True
    except FileNotFoundError:  # no data folder (yet): nothing runs on it
        return False
    return False


def login_url(base_url: str, token: str) -> str:
    """The one-time link a user opens."""
    return f"{base_url.rstrip('/')}/login?t={token}"


def issue_link(logins: LoginStore, base_url: str, user_key: str, lang: str = "") -> str:
    """A new one-time login link for ``user_key`` (valid ten minutes)."""
    return login_url(base_url, logins.issue(user_key, time.time(), lang))


class RunningPage:
    """Login links to the page the ``pcai run`` on ``data_dir`` serves (``/web`` in a
    ``pcai chat`` beside it); a :class:`~bot.frontdesk.ports.LinkIssuer`."""

    def __init__(self, data_dir: Path, logins: LoginStore) -> None:
        self.data_dir = data_dir
        self.logins = logins

    def _base(self) -> str | None:
        if not service_running(self.data_dir):
            return None  # a web.url without a service: a killed process left it
        return running_page_url(self.data_dir)

    @property
    def running(self) -> bool:
        """Whether the service on this data folder serves its page now."""
        return self._base() is not None

    def link(self, user_key: str, lang: str = "") -> str:
        """A new one-time link for ``user_key`` to that page."""
        base = self._base()
        if base is None:
            raise LookupError(f"no pcai run serves a memory page on {self.data_dir}")
        return issue_link(self.logins, base, user_key, lang)
