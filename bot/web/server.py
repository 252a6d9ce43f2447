"""Serves the page with uvicorn inside the bot's own event loop, and makes login links.

The bot owns the process's signals (PTB's ``run_polling``, the terminal chat's Ctrl-C): the
server installs none, and is started and stopped by the bot's lifecycle hooks. A port already
in use is one warning, and the bot goes on without the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import uvicorn

from bot.settings import WebConfig
from bot.web.app import build_app
from bot.web.running import WEB_URL_FILE, issue_link, login_url, running_page_url
from bot.web.security import WebDeps
from memory.base.fsutil import atomic_write_text

log = logging.getLogger(__name__)


__all__ = ["WEB_URL_FILE", "WebServer", "issue_link", "login_url", "running_page_url"]


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handlers: the bot decides when the process stops."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Install nothing."""
        yield


class WebServer:
    """The memory page of one process: start, stop, and login links to it."""

    def __init__(self, deps: WebDeps) -> None:
        self.deps = deps
        self.config: WebConfig = deps.config
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self.port = self.config.port

    @property
    def running(self) -> bool:
        """Whether the page is being served."""
        return self._server is not None and self._server.started

    @property
    def base_url(self) -> str:
        """Where a browser reaches the page (the public URL, else the bound address)."""
        if self.config.public_url:
            return self.config.public_url.rstrip("/")
        return WebConfig(host=self.config.host, port=self.port).base_url

    def link(self, user_key: str, lang: str = "") -> str:
        """A one-time login link for ``user_key``."""
        return issue_link(self.deps.logins, self.base_url, user_key, lang)

    async def start(self) -> bool:
        """Bind and serve in this event loop; False (and a warning) when the port is taken."""
        try:
            sock = listen_socket(self.config.host, self.config.port)
        except OSError as exc:
            log.warning(
                "the memory page cannot listen on %s:%s (%s); the bot runs without it "
                "(set PCAI_WEB_PORT, or PCAI_WEB_ENABLED=false)",
                self.config.host,
                self.config.port,
                exc.strerror or exc,
            )
            return False
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            build_app(self.deps),
            lifespan="off",
            log_level="warning",
            access_log=False,
            proxy_headers=False,
        )
        self._server = server = _QuietServer(config)
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name="pcai-web")
        while not server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():  # it failed to start: say why, keep the bot running
            problem = self._task.exception()
            log.warning("the memory page did not start: %s", problem)
            self._server = None
            return False
        log.info("memory page at %s (send /web for a login link)", self.base_url)
        # Where `pcai web-link` finds the page this process really serves (port 0, a proxy).
        atomic_write_text(self.url_file, self.base_url + "\n")
        return True

    @property
    def url_file(self) -> Path:
        """``<data dir>/web.url``: the running page's address, while it runs."""
        return self.deps.data_dir / WEB_URL_FILE

    async def stop(self) -> None:
        """Stop serving; in-flight requests finish first (a few seconds at most)."""
        if self._server is None or self._task is None:
            return
        self.url_file.unlink(missing_ok=True)
        self._server.should_exit = True
        try:
            await asyncio.wait_for(self._task, timeout=10)
        except (TimeoutError, asyncio.CancelledError):
            self._task.cancel()
        self._server = None
        self._task = None

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[WebServer]:
        """Serve for the duration of a ``with`` block (the terminal chat)."""
        await self.start()
        try:
            yield self
        finally:
            await self.stop()


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` as the page binds it (``pcai doctor`` tries it too)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock
