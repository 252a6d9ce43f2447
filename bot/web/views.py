"""What the page shows, as plain data read from the services (no writes, no HTML)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agent.types import InjectedMemory
from agent.why import WhyLog
from bot.app import Services
from memory.access import AccessStat
from memory.fsutil import read_text
from memory.governance import LIVE
from memory.lifecycle import entry_health, fade_day, is_core
from memory.logs import LogRecord, parse_log
from memory.markdown import STATUSES, Entry
from memory.pending import Proposal
from memory.search import SearchResult
from memory.sources import KIND_MEMORY

PAGE_SIZE = 100
LAYERS = ("L0", "L1", "L2")
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

    def keep(self, row: EntryRow) -> bool:
        """Whether ``row`` passes every filter."""
        e = row.entry
        return (
            (not self.status or e.status == self.status)
            and (not self.layer or row.layer == self.layer)
            and (not self.section or e.section == self.section)
            and (not self.scope or e.scope == self.scope)
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


def rows(services: Services, user_key: str, now: datetime) -> list[EntryRow]:
    """Every entry of the user with its health, use and fade date."""
    stats = services.access.get_many(user_key)
    cfg = services.settings.lifecycle
    min_core = services.settings.budget.l0_min_user_weight
    out = []
    for e in services.memory.entries(user_key):
        stat = stats.get(e.id, AccessStat())
        fades = None if e.status not in LIVE or is_core(e) else fade_day(e, stat, cfg)
        out.append(
            EntryRow(
                e,
                layer_of(e, min_core),
                entry_health(e, stat, now, cfg),
                stat.count,
                stat.last_access[:16].replace("T", " "),
                fades.date().isoformat() if fades else "",
            )
        )
    return out


def listing(all_rows: list[EntryRow], filters: Filters, page: int) -> Listing:
    """One page of the filtered rows, grouped by section in file order."""
    kept = [r for r in all_rows if filters.keep(r)]
    pages = max(1, (len(kept) + PAGE_SIZE - 1) // PAGE_SIZE)
    page = min(max(page, 1), pages)
    groups: dict[str, list[EntryRow]] = {}
    for r in kept[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]:
        groups.setdefault(r.entry.section, []).append(r)
    return Listing(
        list(groups.items()),
        len(kept),
        page,
        pages,
        sorted({r.entry.section for r in all_rows}),
        sorted({r.entry.scope for r in all_rows}),
    )


def search(services: Services, user_key: str, query: str, k: int = 20) -> SearchResult:
    """The bot's hybrid search, after picking up hand edits of MEMORY.md (as chat does)."""
    return services.memory.search_explained(user_key, query, k)


def hits(result: SearchResult, by_id: dict[str, EntryRow], filters: Filters) -> list[Hit]:
    """The kept results; a memory hit carries its row and must pass the filters."""
    out = []
    for h in result.hits:
        c = h.chunk
        row = by_id.get(c.unit_id) if c.kind == KIND_MEMORY else None
        if c.kind == KIND_MEMORY and (row is None or not filters.keep(row)):
            continue
        source = c.date or c.path
        out.append(Hit(h.score, c.text, c.kind, source, row, dict(h.stages)))
    return out


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


def why(services: Services, user_key: str) -> list[tuple[str, Sequence[InjectedMemory]]]:
    """(time, memories) of the user's recent replies that used memories, newest first."""
    return [
        (at[:16].replace("T", " "), used) for at, used in WhyLog(services.state).recent(user_key)
    ]


def log_days(services: Services, user_key: str) -> list[str]:
    """The days that have a log, newest first."""
    folder = services.memory.paths(user_key).log_dir
    if not folder.is_dir():
        return []
    return sorted((p.stem for p in folder.glob("*.md") if DAY.match(p.stem)), reverse=True)


def log_records(services: Services, user_key: str, day: str) -> list[LogRecord] | None:
    """The records of one day's log; None when the day has no log."""
    if not DAY.match(day):
        return None
    path = services.memory.paths(user_key).daily_log(day)
    if not path.is_file():
        return None
    return parse_log(day, read_text(path))


def summaries(services: Services, user_key: str) -> list[tuple[str, str]]:
    """(file name, text) of the user's summary files that exist."""
    paths = services.memory.paths(user_key)
    out = []
    for path in (paths.memory_full_md, paths.auto_summaries_md):
        if path.is_file():
            out.append((path.name, read_text(path)))
    return out
