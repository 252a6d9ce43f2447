"""Plain words for what the page shows of PCAI's workings: layers, sources, roles, files.

A person reads "always in mind", not "L0"; "from an imported file", not "import"; "your log of
2026-11-21", not "memory/2026-11-21.md". The technical value stays on the page, one click
away under a card's "Technical details" (a ``<details>`` element). The words themselves live
with the page's others in :mod:`bot.web.i18n`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.frontdesk.texts import section_label
from bot.web.i18n import word

_LOG_FILE = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})\.md$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LAYERS = ("L0", "L1", "L2", "short_term", "fallback")
_ORIGINS = ("chat", "import", "page", "command", "operator")
_ROLES = ("user", "assistant", "summary")
_FILES = {"MEMORY_FULL.md": "file_memory_full", "auto_summaries.md": "file_auto_summaries"}
_KINDS = ("memory", "log", "summary")


@dataclass(frozen=True, slots=True)
class Plain:
    """The plain words in one language (templates call ``plain.layer(row.layer)``)."""

    lang: str

    def _w(self, key: str) -> str:
        return word(key, self.lang)

    def layer(self, code: str) -> str:
        """When a memory goes into a reply: "always in mind" for L0, and so on."""
        return self._w(f"layer_{code}") if code in _LAYERS else code

    def scope(self, scope: str) -> str:
        """The global scope as "everywhere"; a named one (``project:pcai``) as it is."""
        return self._w("scope_global") if scope == "global" else scope

    def origin(self, source: str) -> str:
        """Where a proposal came from (its ``source``: "chat:tg-12", "import", ...)."""
        head = source.partition(":")[0]
        return self._w(f"from_{head}") if head in _ORIGINS else self._w("from_other")

    def source(self, source: str) -> str:
        """Where a memory that shaped a reply was found ("MEMORY.md § 偏好", a log file); a
        section named in both languages reads in the reader's ("個人 Personal": "Personal")."""
        if source == "MEMORY.md" or source.startswith("MEMORY.md § "):
            section = section_label(source.partition(" § ")[2], self.lang)
            mine = self._w("src_memory")
            return f"{mine} › {section}" if section else mine
        day = _LOG_FILE.match(source)
        if day:
            return self._w("src_log").format(day=day.group(1))
        if source in _FILES:
            return self._w("src_summary")
        if source.startswith("short-term"):
            return self._w("src_short_term")
        return ""  # unknown: shown only under the technical details

    def said(self, source: str, text: str) -> str:
        """A memory that shaped a reply; one found in a log says who said it ("you: ...")."""
        return self.hit_text("log", text) if _LOG_FILE.match(source) else text

    def who(self, role: str) -> str:
        """Who wrote a log record: "you", "PCAI", a summary."""
        return self._w(f"who_{role}") if role in _ROLES else role

    def hit_text(self, kind: str, text: str) -> str:
        """A search hit's text; a log record's "user: ..." says who in plain words."""
        role, sep, said = text.partition(": ")
        if kind == "log" and sep and role in _ROLES:
            return f"{self.who(role)}: {said}"
        return text

    def file(self, name: str) -> str:
        """A summary file's name for a person ("Conversation summaries")."""
        return self._w(_FILES[name]) if name in _FILES else name

    def kind(self, kind: str, source: str) -> str:
        """A search hit's kind with its date or section: "log · 2026-11-21"."""
        what = self._w(f"kind_{kind}") if kind in _KINDS else kind
        if kind == "memory" or _DAY.match(source):
            return f"{what} · {source}" if source else what
        return what
