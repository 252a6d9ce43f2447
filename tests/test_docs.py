"""The repository stands alone: it cites only its own docs/, and they hold what the code ships.

Comments point at ``docs/<file>.md`` (optionally ``, "Heading"``), never at design notes a
person cloning the repository does not have. Every cited file and heading exists, and the
defaults docs/retrieval.md and docs/memory-lifecycle.md quote are the ones in memory/config.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory.config import BudgetConfig, LifecycleConfig, RetrievalConfig
from memory.scoring import RETRIEVAL_WEIGHTS

ROOT = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve()
DOCS = ROOT / "docs"
SKIP_DIRS = {"__pycache__", "node_modules", "botmemory", "build", "dist"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".html", ".js", ".css", ".txt", ".service"}
TEXT_NAMES = {"Makefile"}

# References to documents the repository does not have. This file names them (and cites
# wrong docs on purpose), so it is the one file the scans leave out.
FOREIGN_REFERENCES = [
    re.compile(r"\bseeds?\s*\d{3}\b", re.IGNORECASE),  # "seed 004 §5", "Seeds 001"
    re.compile(r"\bseed's\b|\bseeds'", re.IGNORECASE),  # "the seed's defaults"
    re.compile(r"\bDESIGN(?:\.md)?\b"),  # DESIGN.md, DESIGN "Search"
]
# docs/<file>.md, optionally followed by , "Heading" (the closing quote on the same line).
DOC_CITE = re.compile(r'docs/([\w.-]+\.md)(?:#([\w-]+))?\)?(?:,\s*"([^"\n]*)")?')
DOC_CITE_OPENS_HEADING = re.compile(r'docs/[\w.-]+\.md\)?,\s*"')
# Inside docs/: [text](other.md) or [text](other.md#anchor), optionally , "Heading".
LOCAL_LINK = re.compile(r'\]\(([\w.-]+\.md)(?:#([\w-]+))?\)(?:,\s*"([^"\n]*)")?')
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _text_files() -> list[Path]:
    out = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if any(part.startswith(".") or part in SKIP_DIRS for part in rel.parts[:-1]):
            continue
        if not path.is_file() or rel.parts[-1].startswith("."):
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            out.append(path)
    return out


FILES = _text_files()
SCANNED = [p for p in FILES if p != SELF]


def _headings(doc: Path) -> list[str]:
    return HEADING.findall(doc.read_text(encoding="utf-8"))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def _section(doc: str, heading: str) -> str:
    """The text under ``## heading`` up to the next heading of the same or a higher level."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    match = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.MULTILINE)
    assert match is not None, f"{doc} has no heading {heading!r}"
    level = len(match.group(1))
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def _cite_problems(path: Path, text: str) -> list[str]:
    problems = []
    rel = path.relative_to(ROOT)
    cites = [(m, DOCS) for m in DOC_CITE.finditer(text)]
    if rel.parts[0] == "docs":
        cites += [(m, DOCS) for m in LOCAL_LINK.finditer(text)]
    for match, base in cites:
        name, anchor, heading = match.groups()
        doc = base / name
        line = text.count("\n", 0, match.start()) + 1
        if not doc.is_file():
            problems.append(f"{rel}:{line}: docs/{name} does not exist")
            continue
        headings = _headings(doc)
        if heading is not None and heading not in headings:
            problems.append(f"{rel}:{line}: docs/{name} has no heading {heading!r}")
        if anchor is not None and anchor not in {_slug(h) for h in headings}:
            problems.append(f"{rel}:{line}: docs/{name} has no anchor #{anchor}")
    full = {m.start() for m in DOC_CITE.finditer(text) if m.group(3) is not None}
    for opener in DOC_CITE_OPENS_HEADING.finditer(text):
        if opener.start() not in full:
            line = text.count("\n", 0, opener.start()) + 1
            problems.append(f"{rel}:{line}: a cited heading must close on the same line")
    return problems


def test_the_scan_sees_the_code_and_the_docs() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"memory/scoring.py", "agent/pipeline.py", "README.md", "docs/retrieval.md"} <= names
    assert SELF in FILES and SELF not in SCANNED
    assert not any(n.startswith((".git/", ".venv/")) for n in names)


def test_no_file_cites_design_notes_the_repository_does_not_have() -> None:
    found = []
    for path in SCANNED:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(p.search(line) for p in FOREIGN_REFERENCES):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_every_cited_doc_and_heading_exists() -> None:
    problems = []
    cited = 0
    for path in SCANNED:
        text = path.read_text(encoding="utf-8")
        cited += len(DOC_CITE.findall(text))
        problems += _cite_problems(path, text)
    assert problems == []
    assert cited >= 40  # the code does point at its docs


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('see (docs/retrieval.md, "Staged scoring")', None),
        ('see (docs/retrieval.md, "Staged scorin")', "has no heading 'Staged scorin'"),
        ("see docs/nowhere.md", "docs/nowhere.md does not exist"),
        ('see (docs/retrieval.md, "Staged\n# scoring")', "must close on the same line"),
        ("[x](docs/retrieval.md#staged-scoring)", None),
        ("[x](docs/retrieval.md#nothing-here)", "has no anchor #nothing-here"),
    ],
)
def test_the_citation_check_catches_a_wrong_citation(text: str, problem: str | None) -> None:
    problems = _cite_problems(ROOT / "memory" / "example.py", text)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0]


def _stage_defaults() -> dict[str, str]:
    """docs/retrieval.md "Staged scoring"'s table: stage -> its "shipped default" cell."""
    rows = {}
    for line in _section("retrieval.md", "Staged scoring").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("stage", "---"):
            rows[cells[0]] = cells[2]
    return rows


def _g(value: float) -> str:
    return f"{value:g}"


def test_the_scoring_table_quotes_the_defaults_that_ship() -> None:
    cfg = RetrievalConfig()
    rows = _stage_defaults()
    assert f"fusion: `{cfg.fusion}` (default)" in rows
    assert rows["fusion: `weighted` (default)"] == (
        f"weights {_g(cfg.vector_weight)} / {_g(cfg.bm25_weight)}"
    )
    assert rows["fusion: `vector_bonus`"] == f"bonus {_g(cfg.bm25_hit_bonus)}"
    assert rows["fusion: `rrf`"] == f"k {cfg.rrf_k}"
    assert rows["minimum"] == _g(cfg.min_score)
    assert rows["hard minimum"] == _g(cfg.hard_min_score)
    assert rows["recency boost"] == (
        f"half-life {_g(cfg.recency_half_life_days)} day, weight {_g(cfg.recency_weight)}"
    )
    assert rows["length normalisation"] == f"anchor {cfg.length_norm_anchor} characters"
    assert cfg.time_decay_half_life_days == 0 and rows["time decay"] == "off (half-life 0)"
    assert rows["noise filter"] == ("on" if cfg.filter_noise else "off")
    assert cfg.signal_recency_rate == 0 and rows["retrieval score"].startswith("recency rate 0")
    assert rows["low-priority demotion"] == _g(cfg.low_priority_factor)
    assert rows["MMR"] == _g(cfg.mmr_threshold)
    assert rows["top k"] == str(cfg.top_k)
    candidates = _section("retrieval.md", "Candidates")
    assert f"`max(top_k x {cfg.candidate_multiplier}, {cfg.min_candidates})`" in candidates


def test_the_retrieval_score_and_budget_are_the_ones_that_ship() -> None:
    w_rel, w_rec, w_acc, w_wt = (_g(w) for w in RETRIEVAL_WEIGHTS)
    formula = f"{w_rel} relevance + {w_rec} recency + {w_acc} frequency + {w_wt} weight"
    assert formula in _section("retrieval.md", "Retrieval score")
    b = BudgetConfig()
    budget = _section("retrieval.md", "Selection and budget")
    for quoted in (
        f"| {b.l0_max}, always |",
        f"| {b.l1_max} |",
        f"| {b.l2_max} |",
        f"latest {b.short_term_latest} each, {b.short_term_max_tokens:,} tokens",
        f"The memory block gets {b.memory_tokens:,} tokens",
        f"cut to {b.long_chunk_max_tokens:,} tokens",
        f"first {b.static_fallback_chars:,} characters",
        f"`weight >= {b.l0_min_user_weight}`",
    ):
        assert quoted in budget


def test_the_health_thresholds_are_the_ones_that_ship() -> None:
    c = LifecycleConfig()
    health = _section("memory-lifecycle.md", "Health and lifecycle")
    for quoted in (
        f"exp(-(0.693 / {_g(c.recency_half_life_days)}) x days_since_created_or_kept)",
        f"min(access_count / {c.access_saturation}, 1)",
        f"| >= {_g(c.low_priority_below)} | active |",
        f"| {_g(c.archive_below)} - {_g(c.low_priority_below)} | low_priority",
        f"| < {_g(c.archive_below)} | archived",
        f"| archived for {c.delete_archived_after_days} days | deleted",
        f"leaves it alone for {c.restore_grace_days} days",
        f"within {c.fade_notice_days} days",
    ):
        assert quoted in health
