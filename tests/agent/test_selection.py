"""Layered selection and the token budget (pure functions, real token counter)."""

from __future__ import annotations

from dataclasses import replace

from agent.selection import (
    FALLBACK,
    L0,
    L1,
    L2,
    SHORT_TERM,
    Candidate,
    core_layer,
    fallback_candidate,
    fit_budget,
    gate_sections,
    memories_first,
    scope_layer,
    select,
)
from memory.base.markdown import Entry
from memory.base.tokens import load_counter
from memory.config import BudgetConfig

COUNTER = load_counter()
CFG = BudgetConfig()


def _entry(i: int, **kw: object) -> Entry:
    return replace(
        Entry(id=f"m-{i}", text=f"memory {i}", created_at=f"2026-11-{i % 28 + 1:02d}"), **kw
    )  # type: ignore[arg-type]


def test_core_layer_takes_core_and_heavy_entries_at_most_ten() -> None:
    entries = [_entry(i, is_core=True) for i in range(8)]
    entries += [_entry(100 + i, user_weight=9) for i in range(5)]
    entries += [_entry(200, user_weight=8), _entry(201, is_core=True, status="deprecated")]
    got = core_layer(entries, CFG)
    assert len(got) == 10 and {c.layer for c in got} == {L0}
    ids = {c.id for c in got}
    assert {f"m-{i}" for i in range(8)} <= ids  # is_core ranks before weight
    assert "m-200" not in ids and "m-201" not in ids


def test_scope_layer_matches_mentioned_project_only() -> None:
    entries = [
        _entry(1, scope="project:pcai"),
        _entry(2, scope="lang:rust"),
        _entry(3),  # global: never L1
    ]
    got = scope_layer(entries, "幫我看 PCAI 的 bug", CFG, exclude=set())
    assert [c.id for c in got] == ["m-1"] and got[0].layer == L1
    assert scope_layer(entries, "PCAI", CFG, exclude={"m-1"}) == []


def test_budget_is_never_exceeded_and_order_is_kept() -> None:
    big = "這是一段很長的記憶內容，" * 400  # several thousand tokens
    cands = [
        Candidate(f"c{i}", layer, 1.0, big, source="MEMORY.md")
        for i, layer in enumerate([L0, L0, L1, L2, L2, SHORT_TERM])
    ]
    sel = fit_budget(cands, CFG, COUNTER)
    assert sel.items
    assert sum(COUNTER.count(line) + 1 for line in sel.lines) <= CFG.memory_tokens
    order = [s.candidate.layer for s in sel.items]
    assert order == sorted(order, key=[L0, L1, L2, SHORT_TERM].index)
    # Two long L0 items cannot both fit: the layer is tight, so both go in as summaries;
    # the single L1 item then fits whole (cut to 1,500 tokens); L2 is tight again.
    by_layer = {s.candidate.id: s for s in sel.items}
    assert by_layer["c0"].summarised and by_layer["c1"].summarised
    assert not by_layer["c2"].summarised
    assert CFG.long_chunk_max_tokens - 5 <= COUNTER.count(by_layer["c2"].text)
    assert COUNTER.count(by_layer["c2"].text) <= CFG.long_chunk_max_tokens
    assert by_layer["c3"].summarised


def test_summary_is_used_when_the_full_text_does_not_fit() -> None:
    cfg = BudgetConfig(memory_tokens=120)
    long = "I prefer long detailed explanations about databases. " * 30
    cand = Candidate("c1", L2, 0.9, long, summary="Prefers detailed DB answers")
    sel = fit_budget([cand], cfg, COUNTER)
    assert len(sel.items) == 1 and sel.items[0].summarised
    assert "Prefers detailed DB answers" in sel.items[0].line


def test_short_term_has_its_own_cap() -> None:
    cfg = BudgetConfig(short_term_max_tokens=50)
    rows = [Candidate(f"s{i}", SHORT_TERM, 0.0, f"weather row {i} " * 8) for i in range(3)]
    sel = fit_budget(rows, cfg, COUNTER)
    assert 0 < sel.tokens <= 50


def test_duplicates_across_layers_are_injected_once() -> None:
    a = Candidate("m-1", L0, 1.0, "always reply in Traditional Chinese")
    sel = fit_budget([a, replace(a, layer=L2, score=0.8)], CFG, COUNTER)
    assert [s.candidate.layer for s in sel.items] == [L0]


def test_gating_keeps_allowed_sections_and_non_memory_hits() -> None:
    cands = [
        Candidate("a", L2, 0.9, "x", section="重要決定"),
        Candidate("b", L2, 0.8, "y", section="待辦"),
        Candidate("c", L2, 0.7, "z", section=""),
    ]
    assert [c.id for c in gate_sections(cands, frozenset({"重要決定"}), 5)] == ["a", "c"]
    assert [c.id for c in gate_sections(cands, None, 2)] == ["a", "b"]


def _mem(i: str, score: float) -> Candidate:
    return Candidate(i, L2, score, f"memory {i}", source="MEMORY.md § 偏好", section="偏好")


def _said(i: str, score: float) -> Candidate:
    return Candidate(i, L2, score, f"user: {i}", source="memory/2026-11-20.md", said=True)


def test_memories_take_the_l2_slots_ahead_of_other_conversations_lines() -> None:
    """Log lines of earlier conversations outscore the memory a conversation talks around;
    they may take ``other_max`` slots while memories could fill them, never more."""
    hits = [_said("a", 0.9), _said("b", 0.8), _mem("m1", 0.7), _said("c", 0.6),
            _mem("m2", 0.5), _mem("m3", 0.45), _mem("m4", 0.4)]  # fmt: skip
    assert [c.id for c in memories_first(hits, 4, 1)] == ["m1", "m2", "m3", "a"]
    assert [c.id for c in memories_first(hits, 4, 0)] == ["m1", "m2", "m3", "m4"]
    assert [c.id for c in memories_first(hits, 6, 2)] == ["m1", "m2", "m3", "m4", "a", "b"]
    # Too few memories: the other hits fill the slots they leave, in their order.
    assert [c.id for c in memories_first(hits[:3], 3, 1)] == ["m1", "a", "b"]
    assert [c.id for c in memories_first([_said("a", 0.9)], 5, 0)] == ["a"]
    # A compaction summary is not a memory either.
    summary = Candidate("s", L2, 0.95, "summary: x", source="MEMORY_FULL.md")
    assert [c.id for c in memories_first([summary, _mem("m1", 0.5)], 1, 0)] == ["m1"]


def test_an_earlier_line_takes_a_memorys_slot_only_clearly_above_the_best_memory() -> None:
    """With ``other_margin``, a line of another conversation takes one of the slots memories
    could fill only when its score is that many times the best memory's; the ones above it
    go first. Slots the memories leave are filled by the other hits as before."""
    at_par = [_said("a", 0.55), _mem("m1", 0.5), _mem("m2", 0.45), _mem("m3", 0.4)]
    assert [c.id for c in memories_first(at_par, 3, 1, 1.2)] == ["m1", "m2", "m3"]
    assert [c.id for c in memories_first(at_par, 3, 1, 0.0)] == ["m1", "m2", "a"]
    above = [_said("a", 0.55), _mem("m1", 0.5), _said("b", 0.65), _mem("m2", 0.45)]
    assert [c.id for c in memories_first(above, 2, 1, 1.2)] == ["m1", "b"]
    # Too few memories: the weaker lines still fill what the memories leave.
    assert [c.id for c in memories_first(at_par, 5, 1, 1.2)] == ["m1", "m2", "m3", "a"]


def test_fallback_only_when_nothing_else_and_cut_to_budget() -> None:
    text = "我喜歡喝咖啡，不加糖，而且每天早上都要喝一杯"
    entries = [Entry(f"m-{i}", text, section="偏好") for i in range(300)]
    fb = fallback_candidate(entries, CFG)
    assert fb is not None and fb.layer == FALLBACK and len(fb.text) <= CFG.static_fallback_chars
    sel = select([[], [], []], CFG, COUNTER, fallback=fb)
    assert len(sel.items) == 1 and sel.tokens <= CFG.memory_tokens
    assert "咖啡" in sel.items[0].line
    other = Candidate("m-1", L0, 1.0, "core rule")
    assert [s.candidate.id for s in select([[other]], CFG, COUNTER, fallback=fb).items] == ["m-1"]
    assert fallback_candidate([], CFG) is None
    gone = [Entry("m-a", "舊的", status="archived"), Entry("m-d", "換掉的", status="deprecated")]
    assert fallback_candidate(gone, CFG) is None
