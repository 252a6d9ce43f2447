"""The long-running front ends: ``pcai run`` (Telegram, or the terminal without a token) and
``pcai chat``, each with its scheduled jobs, its background worker and the memory page.

The one-shot commands and the argument handling stay in :mod:`bot.cli`, which calls in here.
"""

from __future__ import annotations

import contextlib
import getpass
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.app import Services, build_agent, build_services, build_worker
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.web.running import RunningPage
    from bot.web.server import WebServer
    from memory.state.statedb import StateDB

log = logging.getLogger("pcai")


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A ``done/total`` bar on stderr (building or rebuilding the index can take a while).

    Its line always ends: when the work stops half-way (an unreadable file), the error said
    next starts on a line of its own instead of after "1/2".
    """
    open_line = False

    def show(done: int, total: int) -> None:
        nonlocal open_line
        width = 30
        filled = int(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        print(f"\r{label} [{bar}] {done}/{total}", end="", file=sys.stderr, flush=True)
        open_line = done < total
        if not open_line:
            print(file=sys.stderr)

    try:
        yield show
    finally:
        if open_line:
            print(file=sys.stderr, flush=True)


def open_services(settings: Settings) -> Services:
    """Every service, with the search index built before the first command uses it."""
    services = build_services(settings)
    with progress_bar("building index") as bar:
        services.memory.ensure_index(progress=bar)
    return services


def chat(
    services: Services,
    user_key: str | None,
    web: WebServer | None = None,
    *,
    backups: bool = False,
) -> int:
    """Chat in the terminal as ``user_key`` (the caller picked it by bot/user_pick.py's rule;
    None: no terminal user yet, so ``cli_<login>``); ``web``: also serve the memory page while
    the chat runs; ``backups``: run the nightly backup (``pcai run`` holds the data folder;
    ``pcai chat`` does not)."""
    from agent.texts import say
    from bot.chat import TerminalChat
    from bot.frontdesk.backend import backend_for
    from bot.frontdesk.language import spoken_to
    from bot.jobs import JobRunner
    from bot.scheduling import scheduled

    if services.agent is None:
        build_agent(services)
    key = user_key or f"cli_{_default_user()}"
    backend = backend_for(services, check_llm=True)
    runner = JobRunner(services, tz=services.tz)
    backend.job_status = runner.summary
    backend.web = web if web is not None else _running_page(services.settings, services.state)

    @contextlib.asynccontextmanager
    async def jobs(notify: Any) -> AsyncIterator[object]:
        # Only this user's files: a service may be running the jobs for everyone else.
        async with scheduled(services, notify, runner, user_key=key, backups=backups) as running:
            if web is None:
                yield running
                return
            async with web.serving():
                if web.running:  # a line of the chat: in the person's language
                    lang = spoken_to(services.languages, key)
                    print(say("chat_page", lang, url=web.base_url))
                yield running

    background = build_worker(services, owns=lambda user_key: user_key == key)
    TerminalChat(backend, key, jobs=jobs, background=background).run()
    return 0


def _running_page(settings: Settings, state: StateDB) -> RunningPage | None:
    """``pcai chat`` serves no page: /web links to the page of the ``pcai run`` beside it."""
    from bot.web.logins import LoginStore
    from bot.web.running import RunningPage

    if not settings.web.enabled:
        return None
    return RunningPage(settings.data_dir, LoginStore(state))


def serve(settings: Settings, user_key: str | None = None) -> int:
    """Run the bot until stopped (the caller holds the data dir's lock); without a token,
    the terminal chat as ``user_key`` (as :func:`chat` takes it)."""
    if not settings.telegram_bot_token:
        print(
            "No TELEGRAM_BOT_TOKEN set: starting the terminal chat. To connect Telegram, "
            "set TELEGRAM_BOT_TOKEN and PCAI_ALLOWED_USERS (see README).",
            file=sys.stderr,
        )
        services = open_services(settings)
        try:
            return chat(services, user_key, _web(services), backups=True)
        finally:
            services.close()
    from bot.frontdesk.backend import backend_for
    from bot.jobs import JobRunner
    from bot.scheduling import ptb_job_setup, telegram_notifier
    from bot.telegram.application import build_application, run
    from bot.telegram.open_turns import OpenTurns

    if not settings.allowed_users:
        log.warning("PCAI_ALLOWED_USERS is empty: the bot will refuse everyone")
    services = open_services(settings)
    try:
        build_agent(services)
        runner = JobRunner(services, tz=services.tz)
        jobs = ptb_job_setup(services, runner)  # idle summaries, indexing, expiry, lifecycle
        backend = backend_for(services)
        backend.job_status = runner.summary
        web = backend.web = _web(services)
        # The terminal chat beside the service works off its own (cli_) users' queue.
        worker = build_worker(services, owns=lambda user_key: not user_key.startswith("cli_"))
        application = build_application(
            settings,
            backend,
            jobs=jobs,
            web=web,
            background=worker,
            turns=OpenTurns(services.state),
        )
        worker.told = _deliver_now(services.state, telegram_notifier(application))
        run(application, settings)
    finally:
        services.close()
    return 0


def _web(services: Services) -> WebServer | None:
    """The memory page over the service's own objects, when it is on."""
    if not services.settings.web.enabled:
        return None
    from bot.web.app import build_deps
    from bot.web.server import WebServer

    return WebServer(build_deps(services))


def _deliver_now(state: StateDB, notifier: Any) -> Callable[[str], Awaitable[int]]:
    """Hand one user their queued notices now (a compaction's line, as it is written)."""
    from bot.isolation import deliver_outbox

    def deliver(user_key: str) -> Awaitable[int]:
        return deliver_outbox(state, notifier, datetime.now(UTC), user_key)

    return deliver


def _default_user() -> str:
    name = "".join(ch for ch in getpass.getuser() if ch.isalnum() or ch in "_.-")
    return name or "local"
