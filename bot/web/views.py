"""What the page shows, as plain data read from the services (no writes, no HTML)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agent.types import InjectedMemory
from agent.why import WhyLog
from history.dailylog import DailyLog
from history.sessions import SessionStore
from memory.base.fsutil import file_stamp, read_text
from memory.base.logs import LogRecord, parse_log
from memory.base.lru import PoolCache
from memory.base.markdown import STATUSES, Entry
from memory.config import LifecycleConfig
from memory.index.sources import KIND_MEMORY
from memory.search.results import SearchResult
from memory.state.usage import AccessCounter, AccessStat
from memory.store.service import MemoryService
from memory.write.governance import LIVE
from memory.write.lifecycle import entry_health, fade_day, is_core, is_fading
from memory.write.proposals import Proposal

PAGE_SIZE = 100
LAYERS = ("L0", "L1", "L2")
# What a cached list of entries costs: the list, and each entry beside 3x its text.
ENTRIES_BYTES = 200
ENTRY_BYTES = 600
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, slots=True)
class EntryRow:
    """One memory with what its card shows beside the Markdown fields."""

    entry: Entry
    layer: str
    health: float
    uses: int
    last_used: str
    fades_on: str  # YYYY-MM-DD; "" when it never fades at today's rate
    fading: bool = False  # it fades within the notice's week: the Keep button is offered


@dataclass(frozen=True, slots=True)
class Filters:
    """The memories page's filters; empty means any."""

    status: str = ""
    layer: str = ""
    section: str = ""
    scope: str = ""

    @classmethod
    def of(cls, params: dict[str, str]) -> Filters:
        """Filters from query parameters, unknown values dropped."""
        status = params.get("status", "")
        layer = params.get("layer", "")
        return cls(
            status if status in STATUSES else "",
            layer if layer in LAYERS else "",
            params.get("section", "")[:200],
            params.get("scope", "")[:200],
        )

    def keep(self, entry: Entry, layer: str) -> bool:
        """Whether ``entry`` (in ``layer``) passes every filter.

        Without a status filter a replaced version is left out: it is shown under its
        current version's timeline (or with the "replaced" filter), not as a second memory.
        """
        return (
            (entry.status == self.status if self.status else entry.status != "deprecated")
            and (not self.layer or layer == self.layer)
            and (not self.section or entry.section == self.section)
            and (not self.scope or entry.scope == self.scope)
        )


@dataclass(frozen=True, slots=True)
class Listing:
    """A page of the memories, grouped by section, plus what the filter menus offer."""

    groups: list[tuple[str, list[EntryRow]]]
    total: int
    page: int
    pages: int
    sections: list[str]
    scopes: list[str]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result as the page shows it."""

    score: float
    text: str
    kind: str
    source: str
    entry: EntryRow | None
    stages: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WhyReply:
    """A reply that used memories: when, its exchange ((who, text): "user" the person,
    "assistant" PCAI), and the memories."""

    at: str
    said: tuple[tuple[str, str], ...]
    used: Sequence[InjectedMemory]


def _exchange(messages: Sequence[tuple[str, str, str]], at: str) -> tuple[tuple[str, str], ...]:
    """From (time, who, text) in order: the person's message at ``at`` and the reply after it
    (a message PCAI began, a reminder's, stands alone); empty when none is at ``at``."""
    times = [m[0] for m in messages]
    if at not in times:
        return ()
    start = next((i for i, m in enumerate(messages) if m[0] == at and m[1] == "user"), None)
    if start is None:  # no message of the person's then: PCAI spoke first (a reminder's)
        first = messages[times.index(at)]
        return (("assistant", first[2]),) if first[1] == "assistant" else ()
    said = [("user", messages[start][2])]
    for _, who, text in messages[start + 1 :]:
        if who == "user":
            break
        if who == "assistant":
            said.append(("assistant", text))
            break
    return tuple(said)


@dataclass(frozen=True, slots=True)
class Drop:
    """A candidate a stage dropped, and why."""

    stage: str
    reason: str
    score: float
    text: str
    entry_id: str


def layer_of(entry: Entry, min_core_weight: int) -> str:
    """The layer the selection would put an entry in: L0 core, L1 scoped, L2 searched."""
    core = entry.is_core or entry.user_weight >= min_core_weight
    if core and entry.status == "active":
        return "L0"
    return "L1" if entry.scope != "global" else "L2"


class EntryCache:
    """Each user's entries, parsed again only when MEMORY.md changed (its file stamp).

    The stamp is taken before the file is read, so a write during the read only makes the
    next request parse again; a hand edit changes the stamp like any other write.
    """

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        # In the process's byte-budgeted pool: a person not seen for a while is parsed again.
        self._cache: PoolCache[str, tuple[tuple[int, int, int, int], list[Entry]]] = (
            memory.caches.cache("page_entries")
        )

    def entries(self, user_key: str) -> list[Entry]:
        """The user's entries in file order."""
        stamp = file_stamp(self.memory.paths(user_key).memory_md)
        cached = self._cache.get(user_key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        entries = self.memory.entries(user_key)
        size = ENTRIES_BYTES + sum(ENTRY_BYTES + 3 * len(e.text.encode()) for e in entries)
        self._cache.put(user_key, (stamp, entries), size)
        return entries


def drops(result: SearchResult) -> list[Drop]:
    """Every candidate a stage removed, with the stage and the reason."""
    return [
        Drop(d.stage, d.reason, d.score, d.chunk.text[:160], d.chunk.unit_id)
        for d in result.dropped
    ]


def minutes_left(p: Proposal, now: datetime) -> int:
    """Whole minutes (rounded up) until the proposal expires."""
    seconds = (p.expires_at - now).total_seconds()
    return max(0, int(-(-seconds // 60)))


@dataclass(frozen=True, slots=True)
class PageViews:
    """The page's reads, over the services they read (given once, by the composition)."""

    memory: MemoryService
    access: AccessCounter
    sessions: SessionStore
    why_log: WhyLog
    daily_log: DailyLog
    lifecycle: LifecycleConfig
    min_core_weight: int  # the budget's L0 threshold: which layer a memory's card names

    def _row(self, e: Entry, stats: dict[str, AccessStat], now: datetime) -> EntryRow:
        stat = stats.get(e.id, AccessStat())
        cfg = self.lifecycle
        fades = None if e.status not in LIVE or is_core(e) else fade_day(e, stat, cfg)
        return EntryRow(
            e,
            layer_of(e, self.min_core_weight),
            entry_health(e, stat, now, cfg),
            stat.count,
            stat.last_access[:16].replace("T", " "),
            fades.date().isoformat() if fades else "",
            is_fading(e, stat, now, cfg),
        )

    def rows(self, user_key: str, entries: Sequence[Entry], now: datetime) -> list[EntryRow]:
        """``entries`` with their health, use and fade date."""
        stats = self.access.get_many(user_key)
        return [self._row(e, stats, now) for e in entries]

    def listing(
        self,
        user_key: str,
        entries: list[Entry],
        filters: Filters,
        page: int,
        now: datetime,
    ) -> Listing:
        """One page of the filtered entries, grouped by section in file order.

        Only the page's entries get their health and fade date computed (a user may have
        10,000).
        """
        min_core = self.min_core_weight
        kept = [e for e in entries if filters.keep(e, layer_of(e, min_core))]
        pages = max(1, (len(kept) + PAGE_SIZE - 1) // PAGE_SIZE)
        page = min(max(page, 1), pages)
        groups: dict[str, list[EntryRow]] = {}
        shown = self.rows(user_key, kept[(page - 1) * PAGE_SIZE : page * PAGE_SIZE], now)
        for r in shown:
            groups.setdefault(r.entry.section, []).append(r)
        return Listing(
            list(groups.items()),
            len(kept),
            page,
            pages,
            sorted({e.section for e in entries}),
            sorted({e.scope for e in entries}),
        )

    def search(self, user_key: str, query: str, k: int = 20) -> SearchResult:
        """The bot's hybrid search, after picking up hand edits of MEMORY.md (as chat does)."""
        return self.memory.search_explained(user_key, query, k)

    def hits(
        self,
        user_key: str,
        result: SearchResult,
        entries: Sequence[Entry],
        filters: Filters,
        now: datetime,
    ) -> list[Hit]:
        """The kept results; a memory hit carries its entry's row and must pass the filters."""
        by_id = {e.id: e for e in entries}
        found = [by_id[h.chunk.unit_id] for h in result.hits if h.chunk.unit_id in by_id]
        row_of = {r.entry.id: r for r in self.rows(user_key, found, now)}
        out = []
        for h in result.hits:
            c = h.chunk
            row = row_of.get(c.unit_id) if c.kind == KIND_MEMORY else None
            if c.kind == KIND_MEMORY and (row is None or not filters.keep(row.entry, row.layer)):
                continue
            source = (c.date or c.path)[:10] if c.kind != KIND_MEMORY else c.section
            out.append(Hit(h.score, c.text, c.kind, source, row, dict(h.stages)))
        return out

    def why(self, user_key: str) -> list[WhyReply]:
        """The user's recent replies that used memories, newest first, each with the exchange
        it belonged to: the message of that time and the reply after it, each by who said it
        (the session's messages, or, once a compaction trimmed them, the daily log's)."""
        messages = [
            (m.time.isoformat(), m.role, m.content)
            for m in self.sessions.load(user_key).messages
            if m.time is not None
        ]
        days: dict[str, list[tuple[str, str, str]]] = {}
        out = []
        for at, used in self.why_log.recent(user_key):
            said = _exchange(messages, at) or self._logged(user_key, at, days)
            out.append(WhyReply(at[:16].replace("T", " "), said, used))
        return out

    def _logged(
        self, user_key: str, at: str, days: dict[str, list[tuple[str, str, str]]]
    ) -> tuple[tuple[str, str], ...]:
        """The exchange logged at ``at`` (the log keeps whole seconds), else nothing."""
        try:
            local = self.daily_log.local(datetime.fromisoformat(at))
        except ValueError:
            return ()
        day = f"{local:%Y-%m-%d}"
        if day not in days:
            days[day] = [(r.time, r.who, r.text) for r in self.log_records(user_key, day) or []]
        return _exchange(days[day], f"{local:%H:%M:%S}")

    def log_days(self, user_key: str) -> list[str]:
        """The days that have a log, newest first."""
        folder = self.memory.paths(user_key).log_dir
        if not folder.is_dir():
            return []
        return sorted((p.stem for p in folder.glob("*.md") if DAY.match(p.stem)), reverse=True)

    def log_records(self, user_key: str, day: str) -> list[LogRecord] | None:
        """The records of one day's log; None when the day has no log."""
        if not DAY.match(day):
            return None
        path = self.memory.paths(user_key).daily_log(day)
        if not path.is_file():
            return None
        return parse_log(day, read_text(path))

    def summaries(self, user_key: str) -> list[tuple[str, str]]:
        """(file name, text) of the user's summary files that exist."""
        paths = self.memory.paths(user_key)
        out = []
        for path in (paths.memory_full_md, paths.auto_summaries_md):
            if path.is_file():
                out.append((path.name, read_text(path)))
        return out
