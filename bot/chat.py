"""The terminal chat: PCAI for people without Telegram (and until the bot is configured)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from bot.app import Services
from memory.errors import MemoryStoreError

HELP = """Commands / 指令:
  /remember <text>   save a memory / 記住
  /search <query>    search your memories / 搜尋
  /memory            list your memories / 列出記憶
  /help              this help / 說明
  /quit              leave / 離開"""


class TerminalChat:
    """A line-oriented chat loop over stdin/stdout."""

    def __init__(self, services: Services, user_key: str, out: TextIO = sys.stdout) -> None:
        self.services = services
        self.user_key = user_key
        self.out = out

    def say(self, text: str) -> None:
        """Print one reply."""
        print(text, file=self.out, flush=True)

    def handle(self, line: str) -> bool:
        """Handle one input line; returns False when the user wants to leave."""
        line = line.strip()
        if not line:
            return True
        command, _, arg = line.partition(" ")
        handlers: dict[str, Callable[[str], None]] = {
            "/remember": self._remember,
            "/search": self._search,
            "/memory": self._memory,
            "/help": lambda _: self.say(HELP),
        }
        if command in ("/quit", "/exit"):
            return False
        try:
            if command in handlers:
                handlers[command](arg.strip())
            else:
                self.say(
                    "Conversation with the model is not wired up yet; the memory commands work. "
                    "Type /help."
                )
        except (MemoryStoreError, ValueError) as exc:
            self.say(f"Sorry, that did not work: {exc}")
        return True

    def _remember(self, text: str) -> None:
        if not text:
            self.say("Usage: /remember <text>")
            return
        entry = self.services.memory.remember(self.user_key, text)
        self.say(f"Saved as {entry.id}.")

    def _search(self, query: str) -> None:
        hits = self.services.memory.search(self.user_key, query) if query else []
        if not hits:
            self.say("Nothing found.")
        for hit in hits:
            self.say(f"[{hit.score:.2f}] {hit.chunk.text}  ({hit.chunk.path})")

    def _memory(self, _: str) -> None:
        entries = self.services.memory.entries(self.user_key)
        if not entries:
            self.say("No memories yet. Use /remember <text>.")
        for e in entries:
            self.say(f"{e.id}  [{e.section}] {e.text}")

    def run(self, stdin: TextIO = sys.stdin) -> None:
        """Read lines until EOF, /quit or Ctrl-C."""
        self.say(f"PCAI terminal chat as {self.user_key}. /help for commands, Ctrl-D to leave.")
        try:
            for line in stdin:
                if not self.handle(line):
                    break
        except KeyboardInterrupt:
            pass
        self.say("Bye.")
