"""The morning briefing's content as plain data, and its plain-list rendering (zh / en).

One message a day: today's reminders, open todos from recent structured summaries (their
``Todo`` field, and the ``待辦`` line of compaction notes), the latest short-term rows
(weather, calendar, mail), and memories that are fading (health score below the low-priority
line, not yet archived). The model-written variant takes the same data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from agent.reminders.service import Listed, ReminderService
from agent.texts import say
from history.sessions import KIND_COMPACTION, Message, SessionStore
from history.summarize import parse_structured
from memory.base.markdown import Entry
from memory.config import LifecycleConfig
from memory.state.short_term import KEYWORDS, ShortTermRow, ShortTermStore
from memory.state.usage import AccessCounter, AccessStat
from memory.store.service import MemoryService
from memory.write.governance import LIVE
from memory.write.lifecycle import entry_health, is_core

_TODO_SPLIT = re.compile(r"[；;]\s*")
_TODO_HEAD = re.compile(r"(?:待辦|todos?)\**\s*[:：]\**\s*", re.I)
_EMPTY = {"", "-", "—", "無", "无", "none", "n/a"}


@dataclass(frozen=True, slots=True)
class BriefingReminder:
    """A reminder ringing today."""

    at: datetime  # local
    text: str
    recurring: bool


@dataclass(frozen=True, slots=True)
class FadingMemory:
    """A memory whose health is sinking toward the archive."""

    entry_id: str
    text: str
    health: float


@dataclass(frozen=True, slots=True)
class Briefing:
    """Everything one morning briefing says."""

    user_key: str
    day: date
    reminders: tuple[BriefingReminder, ...] = ()
    todos: tuple[str, ...] = ()
    short_term: tuple[ShortTermRow, ...] = ()
    fading: tuple[FadingMemory, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing to say."""
        return not (self.reminders or self.todos or self.short_term or self.fading)


def _compaction_todos(content: str) -> list[str]:
    """What follows each "待辦:" / "todo:" in a compaction note, up to the line's end or a "；"
    before the next "label:" field.

    Read piece by piece (a lazy ``(.+?)`` that looks ahead at each "；" is quadratic).
    """
    hits: list[str] = []
    pos = 0
    while m := _TODO_HEAD.search(content, pos):
        line_end = content.find("\n", m.end())
        line = content[m.end() : len(content) if line_end < 0 else line_end]
        pieces = line.split("；")
        kept = [pieces[0]]
        for piece in pieces[1:]:
            head = piece.split(None, 1)[:1]
            if head and any(c in ":：" for c in head[0][1:]):  # the next field begins
                break
            kept.append(piece)
        hit = "；".join(kept)
        hits.append(hit)
        pos = m.end() + len(hit) + 1
    return hits


def todos_from(messages: Sequence[Message], since: datetime, limit: int = 5) -> list[str]:
    """Open todos of messages since ``since``, newest first, each once."""
    found: list[str] = []
    for m in reversed(messages):
        if m.time < since:
            continue
        items: Iterable[str] = ()
        if m.kind == KIND_COMPACTION:
            items = (t for hit in _compaction_todos(m.content) for t in _TODO_SPLIT.split(hit))
        elif m.summary:
            fields = parse_structured(m.summary) or {}
            items = _TODO_SPLIT.split(fields.get("Todo", ""))
        for item in items:
            item = item.strip().strip("*").strip()
            if item.lower() not in _EMPTY and item not in found:
                found.append(item)
    return found[:limit]


def fading_from(
    entries: Sequence[Entry],
    stats: Mapping[str, AccessStat],
    now: datetime,
    config: LifecycleConfig,
    limit: int = 3,
) -> list[FadingMemory]:
    """Entries still retrieved but below the low-priority line, weakest first; core never."""
    out = []
    for entry in entries:
        if is_core(entry) or entry.status not in LIVE:
            continue
        health = entry_health(entry, stats.get(entry.id, AccessStat()), now, config)
        if health < config.low_priority_below:
            out.append(FadingMemory(entry.id, entry.summary or entry.text, health))
    return sorted(out, key=lambda f: (f.health, f.entry_id))[:limit]


def build_briefing(
    user_key: str,
    day: date,
    today: Sequence[Listed],
    todos: Sequence[str],
    short_term: Sequence[ShortTermRow],
    fading: Sequence[FadingMemory],
) -> Briefing:
    """Assemble the briefing from plain data."""
    return Briefing(
        user_key=user_key,
        day=day,
        reminders=tuple(
            BriefingReminder(i.next_local, i.reminder.text, i.rule is not None) for i in today
        ),
        todos=tuple(todos),
        short_term=tuple(short_term),
        fading=tuple(fading),
    )


def render_briefing(briefing: Briefing, lang: str = "zh") -> str:
    """The briefing as a plain list in ``lang`` ("zh"; anything else is English), for when the
    model is down, or by choice."""
    lines = [say("briefing_title", lang, day=briefing.day.isoformat())]
    if briefing.empty:
        return f"{lines[0]}\n{say('briefing_nothing', lang)}"
    if briefing.reminders:
        lines += ["", say("briefing_reminders", lang)]
        for r in briefing.reminders:
            mark = " ↻" if r.recurring else ""
            lines.append(f"• {r.at:%H:%M} {r.text}{mark}")
    if briefing.todos:
        lines += ["", say("briefing_todos", lang)] + [f"• {t}" for t in briefing.todos]
    if briefing.short_term:
        lines += ["", say("briefing_short_term", lang)] + [
            f"• [{r.category}] {r.content}" for r in briefing.short_term
        ]
    if briefing.fading:
        lines += ["", say("briefing_fading", lang)]
        lines += [f"• {f.text} ({f.entry_id}, {f.health:.2f})" for f in briefing.fading]
    return "\n".join(lines)


class BriefingBuilder:
    """Gathers a user's briefing from the reminder, session, short-term and memory stores."""

    def __init__(
        self,
        reminders: ReminderService,
        sessions: SessionStore,
        short_term: ShortTermStore,
        memory: MemoryService,
        access: AccessCounter,
        lifecycle: LifecycleConfig,
        todo_days: int = 7,
        short_term_hours: int = 24,
    ) -> None:
        self.reminders = reminders
        self.sessions = sessions
        self.short_term = short_term
        self.memory = memory
        self.access = access
        self.lifecycle = lifecycle
        self.todo_window = timedelta(days=todo_days)
        self.short_term_window = timedelta(hours=short_term_hours)

    def _recent_short_term(self, user_key: str, now: datetime) -> list[ShortTermRow]:
        out = []
        for category in KEYWORDS:
            for row in self.short_term.latest(user_key, category):
                created = datetime.fromisoformat(row.created_at)
                if created.tzinfo is None:  # written without a zone: the user's wall clock
                    created = created.replace(tzinfo=now.tzinfo)
                if now.astimezone(UTC) - created.astimezone(UTC) <= self.short_term_window:
                    out.append(row)
        return out

    def build(self, user_key: str, day: date | None = None) -> Briefing:
        """The briefing of ``user_key`` as of the service's clock."""
        now = self.reminders.clock().astimezone(self.reminders.zone(user_key))
        messages = self.sessions.load(user_key).messages if self.sessions.exists(user_key) else []
        entries = self.memory.entries(user_key)
        return build_briefing(
            user_key,
            day or now.date(),
            self.reminders.today(user_key),
            todos_from(messages, now - self.todo_window),
            self._recent_short_term(user_key, now),
            fading_from(entries, self.access.get_many(user_key), now, self.lifecycle),
        )
