"""``pcai doctor``'s memory-page line: can ``pcai run`` listen where the settings say?

A port another program holds made the bot start without its page, said only by a log line
inside the chat. The line tries the address the way the server binds it; when it is taken,
it asks what answers there: this PCAI's own page (its favicon, and ``web.url`` in this data
folder), another PCAI's, or some other program.
"""

from __future__ import annotations

import errno
import urllib.request

from bot.errors import DoctorWarning
from bot.settings import Settings

PROBE_SECONDS = 2.0
_FIX = "set PCAI_WEB_PORT to a free port (or PCAI_WEB_ENABLED=false to run without the page)"


class PageSkip(Exception):
    """The page is turned off: nothing to check."""


def _local_url(host: str, port: int) -> str:
    """Where this machine reaches a server listening on ``host:port``."""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _serves_pcai(url: str) -> bool:
    """Whether the server at ``url`` is PCAI's memory page (it serves our favicon)."""
    from bot.web.render import STATIC

    try:
        with urllib.request.urlopen(f"{url}/static/favicon.svg", timeout=PROBE_SECONDS) as r:
            body: bytes = r.read(65536)
    except (OSError, ValueError):
        return False
    return body == (STATIC / "favicon.svg").read_bytes()


def _running_here(settings: Settings) -> bool:
    """Whether a ``pcai run`` on this data folder serves a page (its lock and ``web.url``)."""
    from bot.web.server import running_page_url
    from memory.base.locks import ServiceLock
    from memory.errors import DataDirBusyError

    try:
        ServiceLock(settings.data_dir).acquire().release()
    except DataDirBusyError:
        return running_page_url(settings.data_dir) is not None
    except OSError:  # no data folder (yet): nothing runs on it
        return False
    return False


def check_page(settings: Settings) -> str:
    """One sentence on the page's address; :class:`DoctorWarning` when ``pcai run`` would start
    without the page (the bot itself still runs)."""
    from bot.web.server import listen_socket

    web = settings.web
    if not web.enabled:
        raise PageSkip("PCAI_WEB_ENABLED is false: no memory page")
    where = f"{web.host}:{web.port}"
    if web.port == 0:
        return "PCAI_WEB_PORT is 0: the bot picks a free port when it starts"
    try:
        listen_socket(web.host, web.port).close()
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise DoctorWarning(
                f"pcai run cannot listen on {where} ({exc.strerror or exc}) and would start "
                f"without the memory page: {_FIX}"
            ) from exc
    else:
        return f"{where} is free for the page"
    if _serves_pcai(_local_url(web.host, web.port)):
        if _running_here(settings):
            return f"{where} is served by the PCAI running on this data folder"
        raise DoctorWarning(
            f"another PCAI (on another data folder) serves its page on {where}: this one would "
            f"start without the memory page; {_FIX}"
        )
    raise DoctorWarning(
        f"another program listens on {where}: pcai run would start without the memory page "
        f"(/web gives no link); stop that program or {_FIX}"
    )
