"""Results a person can act on: a confirmed memory before its copies, no greetings or bare
questions, one hit per thing said, best score first (issue 24 item 3; real e5)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bot.app import Services
from bot.cli import main
from memory.index.sources import KIND_LOG, KIND_MEMORY
from memory.search.folding import Item, fold, fold_key, repeats
from tests.memory.daylogs import write_day_log

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone(timedelta(hours=8)))
USER = "cli_alice"
CAT = "我養了一隻貓，叫小橘"
DAY = [
    ("user", "hello, how are you?", "a1"),
    ("user", "我的貓叫什麼名字？", "a2"),
    ("user", CAT, "a3"),  # the message that proposed the memory
    ("user", "do I have a cat?", "a4"),
    ("user", "do I have a cat?", "a5"),
    ("user", "do I have a cat?", "a6"),
    ("user", "what tea do I like?", "a7"),
    ("user", "tea tea", "a8"),
    ("user", "我今天去了茶館", "a9"),
    ("user", "tea is nice", "a10"),
]


@pytest.fixture
def used(services: Services) -> Services:
    """A cat memory confirmed two days ago, a tea one, and today's log of a new user."""
    services.memory.remember(USER, CAT, now=NOW - timedelta(days=2))
    tea = "I prefer green tea in the afternoon"
    services.memory.remember(USER, tea, now=NOW - timedelta(days=2))
    write_day_log(services.library, USER, NOW.strftime("%Y-%m-%d"), DAY)
    return services


def test_fold_keeps_the_memory_where_its_copy_stood() -> None:
    assert fold_key("Do I have a cat?") == fold_key("do i have a CAT") == "doihaveacat"
    assert repeats(fold_key(CAT), fold_key(f"{CAT}。"))
    assert not repeats(fold_key(CAT), fold_key("我的貓叫什麼名字？"))
    items = [
        Item(CAT, False, 0.6),  # a log copy, scored above the memory by its recency
        Item(CAT, True, 0.5),
        Item("do I have a cat?", False, 0.55),
        Item("Do I have a cat", False, 0.54),
        Item("other", False, 0.4),
    ]
    out = fold(items)
    assert out.kept == [(1, 0.6), (2, 0.55), (4, 0.4)]
    assert out.into == {0: 1, 3: 2}
    # A memory under a threshold is only a target: its copy that passed brings it back.
    assert fold([Item(CAT, False, 0.6), Item(CAT, True, 0.2, target_only=True)]).kept == [(1, 0.6)]
    assert fold([Item("x y z", False, 0.6), Item(CAT, True, 0.2, target_only=True)]).kept == [
        (0, 0.6)
    ]
    # With a limit (the search's k), the visit stops once that many are kept.
    assert fold(items, limit=2).into == {0: 1}
    assert fold(items, limit=3).into == {0: 1, 3: 2}


def test_the_cat_memory_comes_first_and_its_copies_not_at_all(
    used: Services, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hits = used.memory.search(USER, "貓", 2, now=NOW)
    assert hits[0].chunk.kind == KIND_MEMORY and hits[0].chunk.text == CAT
    assert all(fold_key(h.chunk.text.split(": ", 1)[-1]) != fold_key(CAT) for h in hits[1:])
    # The command: `pcai search -k 2 貓` lists the memory, with its id, first.
    monkeypatch.setenv("PCAI_DATA_DIR", str(used.settings.data_dir))
    assert main(["search", "--user", USER, "-k", "2", "貓"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(CAT) and f"id={hits[0].chunk.unit_id}" in out[1]


def test_greetings_and_bare_questions_never_come_back(used: Services) -> None:
    for query in ("cat", "tea", "貓"):
        result = used.memory.search_explained(USER, query, 5, now=NOW)
        said = [h.chunk.text for h in result.hits]
        assert "user: hello, how are you?" not in said
        assert not any("do I have a cat" in t or "我的貓叫什麼" in t for t in said), said
        assert len(said) == len(set(said))
    cat = used.memory.search_explained(USER, "cat", 5, now=NOW)
    assert [h.chunk.text for h in cat.hits if h.chunk.kind == KIND_MEMORY] == [CAT]
    why = {d.chunk.text: d.stage for d in cat.dropped}
    assert why["user: do I have a cat?"] == "noise"


def test_results_come_best_score_first(used: Services) -> None:
    listed = 0
    for query in ("tea", "cat", "茶"):
        hits = used.memory.search(USER, query, 5, now=NOW)
        listed += len(hits)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True), (query, scores)
    assert listed >= 5
    logs = [h for h in used.memory.search(USER, "tea", 5, now=NOW) if h.chunk.kind == KIND_LOG]
    assert logs  # the log's own lines about tea are still found


def test_a_noise_line_lifts_no_neighbour(services: Services) -> None:
    # A greeting that names the query word is noise; the unrelated line after it used to
    # ride on its score (the neighbour lift), and such riders came and went as lines were
    # logged: the same query gave 5 results and minutes later 1.
    day = (NOW - timedelta(days=1)).strftime("%Y-%m-%d")
    lines = [
        ("user", "hi, tea!", "b1"),
        ("user", "thanks!", "b2"),
        ("user", "my sister moved to Berlin last spring", "b3"),  # two records on
    ]
    write_day_log(services.library, USER, day, lines)
    result = services.memory.search_explained(USER, "tea", 5, now=NOW)
    assert [d.stage for d in result.dropped if d.chunk.text == "user: hi, tea!"] == ["noise"]
    assert all("Berlin" not in h.chunk.text for h in result.hits)
