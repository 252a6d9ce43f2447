"""Layered memory selection under a token budget (docs/retrieval.md, "Selection and budget").

Everything here is pure: the pipeline gathers the user's entries, search hits and short-term
rows, and these functions decide what goes into the prompt.

- L0 core rules: ``is_core`` or ``user_weight >= 9``, active, at most 10, always.
- L1 scope memories: a non-global scope (``project:<name>``, ``lang:<name>``) whose name the
  conversation mentions, at most 5.
- L2 task memories: hybrid-search hits (at most 6; memories ahead of log lines of other
  conversations, and memories under the thresholds within a score gap), only when the
  adaptive check says so.
- short-term rows matched by keyword (latest 3), together at most 1,000 tokens.

The budget (2,000 tokens) is spent in the order L0 -> L1 -> L2 -> short-term; one long-term
chunk is cut to 1,500 tokens first; an item whose full text no longer fits is replaced by its
summary, and skipped if even that does not fit. When nothing was selected and the user has
live memories, the first 4,000 characters of those memories, rendered by section, are the
static fallback, cut to the budget as well.
It is rendered rather than read from the file, so archived and deprecated entries, governance
fields and notes never reach the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from memory.base.markdown import Entry, MemoryStatus
from memory.base.tokens import TokenCounter
from memory.config import BudgetConfig
from memory.index.text import keyword_terms
from memory.write.governance import LIVE


class Layer(StrEnum):
    """Where a candidate comes from, in the order the budget is spent (``/why`` shows it)."""

    L0 = "L0"  # core rules
    L1 = "L1"  # scope matches
    L2 = "L2"  # hybrid-search hits
    SHORT_TERM = "short_term"
    FALLBACK = "fallback"  # the static MEMORY.md prefix


L0, L1, L2, SHORT_TERM, FALLBACK = Layer.L0, Layer.L1, Layer.L2, Layer.SHORT_TERM, Layer.FALLBACK
LAYER_ORDER = tuple(Layer)
# A summary made from the text itself, when the entry has none, is this long at most.
SUMMARY_TOKENS = 60
_SENTENCE_END = re.compile(r"(?<=[。！？!?.;；])\s*|\n")
_SCOPE = re.compile(r"^(project|lang|framework|path):(.+)$")
# Where compaction writes its summaries: MEMORY_FULL.md, and a "summary" record of
# the daily log. Their hits are part of the compaction's share of the prompt
# (``HistoryConfig.compaction_prompt_tokens``).
COMPACTION_SOURCE = "MEMORY_FULL.md"
# The source of an entry of MEMORY.md: "MEMORY.md § <section>".
MEMORY_SOURCE = "MEMORY.md §"
LOG_SUMMARY_PREFIX = "summary: "
# How a daily-log line is labelled in the data block (the preface in agent/prompt.py says it).
SAID_LABEL = "said in conversation on"
_PIECE_SPLIT = re.compile(r"\n|；")
_HEADING = re.compile(r"^#*\s*對話摘要 \(\d{4}-\d{2}-\d{2}\)$")


@dataclass(frozen=True, slots=True)
class Candidate:
    """Something that could go into the memory block."""

    id: str
    layer: Layer
    score: float
    text: str
    summary: str = ""
    source: str = ""  # "MEMORY.md § 偏好", "memory/2026-11-22.md", "short-term: weather"
    date: str = ""  # YYYY-MM-DD when known
    section: str = ""  # MEMORY.md section (section gating), "" for logs and summaries
    # A line of the daily log: what was said in conversation that day, never a memory the
    # user confirmed (a refused proposal's line is one), so it is labelled as such.
    said: bool = False


@dataclass(frozen=True, slots=True)
class Selected:
    """A candidate as it is injected: the rendered line and what it costs."""

    candidate: Candidate
    text: str  # what was injected: the (cut) full text, or the summary
    line: str
    tokens: int
    summarised: bool = False


@dataclass(frozen=True, slots=True)
class Selection:
    """The memory block's contents, in prompt order, and its total cost."""

    items: tuple[Selected, ...] = ()
    # The section of the best memory the turn's search found before section gating narrowed
    # it: what the section window records, so gating cannot feed itself.
    found_sections: tuple[str, ...] = ()

    @property
    def tokens(self) -> int:
        """Tokens of the rendered lines (newline separators included)."""
        return sum(s.tokens for s in self.items)

    @property
    def lines(self) -> list[str]:
        """The rendered lines."""
        return [s.line for s in self.items]


def is_core(entry: Entry, cfg: BudgetConfig) -> bool:
    """The L0 filter: ``is_core=true`` or ``user_weight >= 9``."""
    return entry.is_core or entry.user_weight >= cfg.l0_min_user_weight


def _date(value: str) -> str:
    return value[:10] if len(value) >= 10 else value


def entry_candidate(entry: Entry, layer: Layer, score: float) -> Candidate:
    """A MEMORY.md entry as a candidate of ``layer``."""
    return Candidate(
        id=entry.id,
        layer=layer,
        score=score,
        text=entry.text,
        summary=entry.summary,
        source=f"{MEMORY_SOURCE} {entry.section}",
        date=_date(entry.created_at),
        section=entry.section,
    )


def core_layer(entries: Iterable[Entry], cfg: BudgetConfig) -> list[Candidate]:
    """L0: active core entries, strongest first (is_core, then weight, then newest)."""
    core = [e for e in entries if e.status == MemoryStatus.ACTIVE and is_core(e, cfg)]
    core.sort(key=lambda e: (e.is_core, e.user_weight, e.created_at), reverse=True)
    return [entry_candidate(e, L0, e.user_weight / 10) for e in core[: cfg.l0_max]]


def scope_name(scope: str) -> str:
    """The name part of a non-global scope (``project:PCAI`` -> ``pcai``), else ""."""
    m = _SCOPE.match(scope.strip().lower())
    return m.group(2).strip() if m else ""


def scope_layer(
    entries: Iterable[Entry], context: str, cfg: BudgetConfig, exclude: set[str]
) -> list[Candidate]:
    """L1: active entries whose scope's name appears in the conversation ``context``."""
    low = context.lower()
    found = []
    for e in entries:
        name = scope_name(e.scope)
        if e.id in exclude or e.status != MemoryStatus.ACTIVE or not name or name not in low:
            continue
        found.append(e)
    found.sort(key=lambda e: (e.user_weight, e.created_at), reverse=True)
    return [entry_candidate(e, L1, e.user_weight / 10) for e in found[: cfg.l1_max]]


def gate_sections(
    candidates: Sequence[Candidate], allowed: frozenset[str] | None, limit: int
) -> list[Candidate]:
    """Section gating: keep hits of the allowed sections (and hits outside MEMORY.md), best
    first."""
    kept = [c for c in candidates if allowed is None or not c.section or c.section in allowed]
    return kept[:limit]


def is_memory(cand: Candidate) -> bool:
    """Whether ``cand`` is an entry of MEMORY.md: something the person confirmed."""
    return cand.source.startswith(MEMORY_SOURCE)


def memories_first(
    candidates: Sequence[Candidate], limit: int, other_max: int, other_margin: float = 0.0
) -> list[Candidate]:
    """The L2 slots: the person's memories first, then at most ``other_max`` other hits.

    Other hits (daily-log lines of earlier conversations, compaction summaries) score like any
    chunk and, told in many words, often above the memory a conversation talks around; they
    take the slots the memories leave, and at most ``other_max`` while memories could fill
    them, those only when their score is at least ``other_margin`` times the best memory's.
    Each group keeps its search order (the ones above the margin first); memories come first
    in the prompt.
    """
    mems = [c for c in candidates if is_memory(c)]
    others = [c for c in candidates if not is_memory(c)]
    cut = other_margin * max((c.score for c in mems), default=0.0)
    others.sort(key=lambda c: c.score < cut)  # stable: those above the margin first
    strong = sum(1 for c in others if c.score >= cut)
    n_mem = min(len(mems), max(0, limit - min(other_max, strong)))
    return mems[:n_mem] + others[: max(0, limit - n_mem)]


def fallback_text(entries: Iterable[Entry]) -> str:
    """The live entries (active, low priority) as ``## section`` headings and bullets."""
    lines: list[str] = []
    section = None
    for e in entries:
        if e.status not in LIVE or not e.text.strip():
            continue
        if e.section != section:
            section = e.section
            lines += ["", f"## {section}"] if lines else [f"## {section}"]
        lines.append("- " + e.text.strip().replace("\n", "\n  "))
    return "\n".join(lines)


def fallback_groups(text: str) -> list[tuple[str, list[str]]]:
    """The memory overview a reply was given when nothing was found (:func:`fallback_text`:
    ``## section`` headings and ``- `` bullets) as (section, memories), for a reader to see as
    a list under each section's name in their language, not as Markdown (the page, /why)."""
    groups: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            groups.append((line[3:].strip(), []))
        elif line.startswith("- ") or not groups:
            if not groups:
                groups.append(("", []))
            groups[-1][1].append(line[2:] if line.startswith("- ") else line)
        elif line.startswith("  ") and groups[-1][1]:  # a memory's next line
            groups[-1][1][-1] += "\n" + line[2:]
    return [(section, items) for section, items in groups if items]


def fallback_candidate(entries: Iterable[Entry], cfg: BudgetConfig) -> Candidate | None:
    """The static fallback: the first 4,000 characters of the live memories, if any."""
    text = fallback_text(entries)[: cfg.static_fallback_chars].strip()
    if not text:
        return None
    return Candidate(id="MEMORY.md", layer=FALLBACK, score=0.0, text=text, source="MEMORY.md")


def render_line(candidate: Candidate, text: str, *, summarised: bool = False) -> str:
    """One memory as a line of the data block: ``- [L0 | 2026-11-22 | source] text``.

    A log line is ``- [L2 | said in conversation on 2026-11-22] user: ...``: the model must
    not take what was only said (or proposed and refused) for a memory the user kept.
    """
    parts: tuple[str, ...] = (candidate.layer, candidate.date, candidate.source)
    if candidate.said:
        parts = (candidate.layer, f"{SAID_LABEL} {_date(candidate.date)}".strip())
    meta = " | ".join(p for p in parts if p)
    if summarised:
        meta += " | summary"
    # Indent continuation lines so a memory cannot fake the start of another item.
    body = text.strip().replace("\n", "\n  ")
    return f"- [{meta}] {body}"


def make_summary(candidate: Candidate, counter: TokenCounter) -> str:
    """The entry's own summary, else its first sentence cut to ``SUMMARY_TOKENS``."""
    if candidate.summary.strip():
        return candidate.summary.strip()
    first = _SENTENCE_END.split(candidate.text.strip(), maxsplit=1)[0]
    cut = counter.truncate(first, SUMMARY_TOKENS)
    return cut if cut == candidate.text.strip() else cut.rstrip() + " …"


def fit_budget(
    candidates: Sequence[Candidate], cfg: BudgetConfig, counter: TokenCounter
) -> Selection:
    """Spend the memory budget on ``candidates`` in order; the rules are above.

    Layer by layer: when a layer's full texts fit in what is left, they go in whole; when
    they do not (the budget is tight), every item of that layer is injected by its summary,
    so one long memory cannot crowd out the rest of its layer.
    Each item costs ``count(line) + 1`` (its newline), so the block's lines never exceed
    ``cfg.memory_tokens`` in total, and short-term items never exceed
    ``cfg.short_term_max_tokens`` among themselves.
    """
    remaining = cfg.memory_tokens
    short_left = cfg.short_term_max_tokens
    unique: dict[str, Candidate] = {}
    for cand in candidates:
        unique.setdefault(cand.id, cand)  # a memory found by two layers goes in once
    chosen: list[Selected] = []
    for layer in dict.fromkeys(c.layer for c in unique.values()):
        members = [c for c in unique.values() if c.layer == layer]
        cap = min(remaining, short_left) if layer == SHORT_TERM else remaining
        full_cost = sum(_full(c, cfg, counter)[1] for c in members)
        tight = full_cost > cap and len(members) > 1
        for cand in members:
            limit = min(remaining, short_left) if layer == SHORT_TERM else remaining
            picked = _fit_one(cand, limit, cfg, counter, summary_first=tight)
            if picked is None:
                continue
            chosen.append(picked)
            remaining -= picked.tokens
            if layer == SHORT_TERM:
                short_left -= picked.tokens
    return Selection(tuple(chosen))


def _full(cand: Candidate, cfg: BudgetConfig, counter: TokenCounter) -> tuple[str, int]:
    """The candidate's text cut to one chunk's maximum, and the cost of its line."""
    text = counter.truncate(cand.text, cfg.long_chunk_max_tokens)
    return text, counter.count(render_line(cand, text)) + 1


def _fit_one(
    cand: Candidate,
    limit: int,
    cfg: BudgetConfig,
    counter: TokenCounter,
    *,
    summary_first: bool = False,
) -> Selected | None:
    if limit <= 1:
        return None
    if cand.layer == FALLBACK:
        return _fit_fallback(cand, limit, cfg, counter)
    summary = make_summary(cand, counter)
    if not summary_first or summary == cand.text.strip():
        text, cost = _full(cand, cfg, counter)
        if cost <= limit:
            return Selected(cand, text, render_line(cand, text), cost)
    line = render_line(cand, summary, summarised=True)
    cost = counter.count(line) + 1
    return Selected(cand, summary, line, cost, summarised=True) if cost <= limit else None


def _fit_fallback(
    cand: Candidate, limit: int, cfg: BudgetConfig, counter: TokenCounter
) -> Selected | None:
    """The fallback is one document: cut it to what is left rather than summarise it."""
    text, cost = _full(cand, cfg, counter)
    if cost <= limit:
        return Selected(cand, text, render_line(cand, text), cost)
    overhead = counter.count(render_line(cand, "")) + 2
    cut = counter.truncate(text, max(0, limit - overhead))
    while cut:
        line = render_line(cand, cut)
        cost = counter.count(line) + 1
        if cost <= limit:
            return Selected(cand, cut, line, cost)
        cut = counter.truncate(cut, max(0, counter.count(cut) - (cost - limit) - 1))
    return None


def select(
    layers: Sequence[Sequence[Candidate]],
    cfg: BudgetConfig,
    counter: TokenCounter,
    fallback: Candidate | None = None,
) -> Selection:
    """Fit ``layers`` (in L0, L1, L2, short-term order) to the budget, else use ``fallback``."""
    selection = fit_budget([c for layer in layers for c in layer], cfg, counter)
    if not selection.items and fallback is not None:
        selection = fit_budget([fallback], cfg, counter)
    return selection


def _terms(text: str) -> set[str]:
    """The query's keywords (CJK bigrams, words), unquoted, for matching summary pieces."""
    return {t[1:-1].replace('""', '"').replace(" ", "").lower() for t in keyword_terms(text)}


def is_compaction_summary(cand: Candidate) -> bool:
    """Whether ``cand`` is a compaction summary: a MEMORY_FULL.md block or its log record."""
    if cand.source == COMPACTION_SOURCE:
        return True
    return cand.source.startswith("memory/") and cand.text.startswith(LOG_SUMMARY_PREFIX)


def summary_excerpt(cand: Candidate, query: str, counter: TokenCounter, limit: int) -> str:
    """A compaction summary hit cut to the pieces that match ``query``, within ``limit``.

    A summary is bullets of clauses (``；``); its pieces (the heading too: the line's date and
    source say the same) are ranked by how many of the query's keywords they hold (ties: in
    order) and kept, in the summary's order, while the rendered line fits ``limit`` tokens.
    With no piece matching, the first one (the topic) stands for it. "" when none fits.
    """
    pieces = [p.strip().lstrip("-*").strip() for p in _PIECE_SPLIT.split(cand.text)]
    pieces = [p for p in pieces if p and not _HEADING.match(p)]
    terms = _terms(query)
    scores = [sum(t in p.lower() for t in terms) for p in pieces]
    ranked = sorted(range(len(pieces)), key=lambda i: (-scores[i], i))
    if ranked and scores[ranked[0]] > 0:
        ranked = [i for i in ranked if scores[i] > 0]
    else:
        ranked = ranked[:1]
    chosen: list[int] = []
    for i in ranked:
        trial = sorted([*chosen, i])
        text = "\n".join(pieces[j] for j in trial)
        if counter.count(render_line(cand, text)) + 1 <= limit:
            chosen = trial
    return "\n".join(pieces[j] for j in chosen)


def fit_summaries(
    candidates: Sequence[Candidate], query: str, counter: TokenCounter, max_tokens: int
) -> list[Candidate]:
    """Compaction summary hits cut to their pieces about ``query``, all within ``max_tokens``.

    Other candidates pass unchanged. Best hit first: each takes what it needs of the room the
    ones before it left, and a hit that no longer fits is left out.
    """
    left = max_tokens
    out: list[Candidate] = []
    for cand in candidates:
        if not is_compaction_summary(cand):
            out.append(cand)
            continue
        text = summary_excerpt(cand, query, counter, left)
        if not text:
            continue
        left -= counter.count(render_line(cand, text)) + 1
        out.append(replace(cand, text=text, summary=text))
    return out
