"""One PCAI process on the world's data folder, as a restarted or killed process would run it.

Built the way ``pcai run`` builds it: the composition root's services (real SQLite, real
Markdown, the embedded e5 embedder), the agent on the configured model server (the scripted
model, OpenAI-compatible or Ollama), and both front ends over one backend: Telegram's
Application (its update queue, the per-user queues that keep each message in ``open_turns``
until it is handled, its handlers, the Desk) on an offline Bot API, and the terminal chat.
Starting runs what a process does at start: ``recover_at_start`` (in the composition root) and
the replay of the turns the last process never finished.

A person reaches the process through a :class:`Front`: the Desk and the reminder desk their
front end calls for commands, and their chat line. Everything the process showed (Bot API
calls, terminal lines) is kept in ``screen``.
"""

from __future__ import annotations

import asyncio
import io
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.reminders.desk import ReminderDesk
from bot.app import Services, build_agent, build_services
from bot.chat import TerminalChat
from bot.frontdesk.backend import ServicesBackend, backend_for
from bot.frontdesk.desk import Desk
from bot.settings import Settings, load_settings
from bot.telegram.application import QUEUES, build_application
from bot.telegram.context import DEPS, BotApp
from bot.telegram.open_turns import OpenTurns
from memory.index.embedders import Embedder
from tests.bot.telegram_doubles import RecordingRequest, Updates
from tests.world.page import Page

OWNER = 1001  # the Telegram person's id
TELEGRAM_KEY = f"telegram_{OWNER}"
TERMINAL_KEY = "cli_ann"
SETTLE_SECONDS = 60.0


def world_settings(data_dir: Path, backend: str, model_url: str, zone: str) -> Settings:
    """``pcai run``'s settings for the world: Telegram on, the model on ``backend``'s wire."""
    where = "PCAI_LLM_BASE_URL" if backend == "openai" else "OLLAMA_HOST"
    return load_settings(
        {
            "PCAI_DATA_DIR": str(data_dir),
            "PCAI_LLM_BACKEND": backend,
            where: model_url,
            "PCAI_TIMEZONE": zone,
            "TELEGRAM_BOT_TOKEN": "123:TEST",
            "PCAI_ALLOWED_USERS": str(OWNER),
        }
    )


@dataclass
class Front:
    """How one person reaches the process: the desks their front end calls, and their chat."""

    key: str
    lang: str
    desk: Desk
    reminders: ReminderDesk
    chat: Callable[[str], Awaitable[str]]  # sends one chat line; returns its message id, if known


class Process:
    """The services, the agent and both front ends of one process (module docstring)."""

    def __init__(
        self, services: Services, backend: ServicesBackend, app: BotApp, updates: Updates
    ) -> None:
        self.services = services
        self.backend = backend
        self.app = app
        self.updates = updates
        self.api: RecordingRequest = app.bot.request  # type: ignore[assignment]
        self.out = io.StringIO()
        reminders = backend.reminders
        assert reminders is not None, "the composition root builds the reminder service"
        self.terminal = TerminalChat(backend, TERMINAL_KEY, self.out, reminders=reminders)
        self._idle: set[asyncio.Task[Any]] = set()
        self._pages: dict[str, Page] = {}
        self.fronts = {
            TELEGRAM_KEY: Front(TELEGRAM_KEY, "en", app.bot_data[DEPS].desk, reminders, self._tg),
            TERMINAL_KEY: Front(TERMINAL_KEY, "zh", self.terminal.desk, reminders, self._terminal),
        }

    @classmethod
    async def start(cls, settings: Settings, embedder: Embedder, updates: Updates) -> Process:
        """Open the folder as a starting process does, and answer what the last one left."""
        services = build_services(settings, embedder=embedder)
        services.memory.ensure_index()
        build_agent(services)
        backend = backend_for(services)
        app = build_application(
            settings, backend, request=RecordingRequest(), turns=OpenTurns(services.state)
        )
        await app.initialize()
        await app.start()  # the update queue's fetcher: updates are handled as polling does
        proc = cls(services, backend, app, updates)
        proc._idle = set(asyncio.all_tasks())
        await app.bot_data[QUEUES].replay()  # post_init's step for the turns left open
        await proc.settle()
        return proc

    async def _tg(self, text: str) -> str:
        """A private Telegram message from the owner, through the update queue."""
        update = self.updates.message(self.app.bot, OWNER, text, lang="en")
        await self.app.update_queue.put(update)
        await self.settle()
        return str(self.updates.message_id)

    async def _terminal(self, text: str) -> str:
        """One line typed in the terminal chat (its message id is the chat's own)."""
        await self.terminal.handle(text)
        return ""

    def page(self, key: str) -> Page:
        """The person's browser on this process's memory page (opened on first use)."""
        if key not in self._pages:
            self._pages[key] = Page(self.services, key, self.fronts[key].lang)
        return self._pages[key]

    def send_telegram(self, text: str) -> str:
        """Put a message on the update queue without waiting for its answer; its id."""
        update = self.updates.message(self.app.bot, OWNER, text, lang="en")
        self.app.update_queue.put_nowait(update)
        return str(self.updates.message_id)

    async def settle(self) -> None:
        """Wait until every update is handled and every task it started has ended."""
        await asyncio.wait_for(self.app.update_queue.join(), SETTLE_SECONDS)
        here = asyncio.current_task()
        for _ in range(1000):
            busy = [t for t in asyncio.all_tasks() if t is not here and t not in self._idle]
            busy = [t for t in busy if not t.done()]
            if not busy:
                return
            await asyncio.wait(busy, timeout=SETTLE_SECONDS)
        raise RuntimeError("the process never settled")

    def busy(self) -> bool:
        """Whether an update waits or a task it started still runs."""
        here = asyncio.current_task()
        running = [t for t in asyncio.all_tasks() if t is not here and t not in self._idle]
        return not self.app.update_queue.empty() or any(not t.done() for t in running)

    def screen(self) -> list[str]:
        """Every text the process showed: Bot API calls' texts, then the terminal's lines."""
        shown = [str(p.get(k, "")) for _, p in self.api.calls for k in ("text", "caption")]
        return [s for s in shown if s] + self.out.getvalue().splitlines()

    async def stop(self) -> None:
        """Stop as ``pcai run`` does on SIGTERM: the queues, the app, the flush, the files."""
        try:
            for page in self._pages.values():
                await page.close()
            await self.app.bot_data[QUEUES].stop()
            await self.app.stop()
            await self.app.shutdown()
            await self.backend.flush()
        finally:
            self.services.close()


def kill_copy(data_dir: Path, to: Path) -> None:
    """The data folder as a kill -9 leaves it: every file as it is on disk right now, the
    SQLite ``-wal`` and ``-shm`` files with it, while the process still has them open."""
    shutil.copytree(data_dir, to, symlinks=True)


def replace_folder(data_dir: Path, copy: Path) -> None:
    """Put the killed process's folder back where the next process opens it."""
    shutil.rmtree(data_dir)
    shutil.move(str(copy), str(data_dir))
