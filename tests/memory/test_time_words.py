"""Time words in a query: the days they name, and the hits dated then ranked first."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import Memory
from memory.base.logs import format_record, log_header
from memory.search.when import Days, fits, named_days

USER = "tg_when"
NOW = datetime(2026, 8, 12, 21, 0, tzinfo=timezone(timedelta(hours=8)))


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("What did I do on October 13, 2025?", "2025-10-13", "2025-10-13"),
        ("What did Gina find on 1 February, 2026?", "2026-02-01", "2026-02-01"),
        ("What setback did Mel face in October 2025?", "2025-10-01", "2025-10-31"),
        # No year: the latest such month on the clock, this year's or last year's.
        ("When did we go camping in June?", "2026-06-01", "2026-06-30"),
        ("Any plans from mid-September?", "2025-09-01", "2025-09-30"),
        ("How often did I swim in 2025?", "2025-01-01", "2025-12-31"),
        ("Where did I travel last year?", "2025-01-01", "2025-12-31"),
        ("What did I cook last week?", "2026-08-03", "2026-08-09"),
        ("Who came over last weekend?", "2026-08-08", "2026-08-09"),
        ("What did I say yesterday?", "2026-08-11", "2026-08-11"),
        ("What did we do last Christmas?", "2025-12-24", "2025-12-26"),
        ("我2025年10月13日做了什麼", "2025-10-13", "2025-10-13"),
        ("2026年3月的旅行", "2026-03-01", "2026-03-31"),
        ("我们三月去了哪里", "2026-03-01", "2026-03-31"),
        ("十二月二十五日那天", "2025-12-25", "2025-12-25"),
        ("去年聖誕節的派對", "2025-12-24", "2025-12-26"),
        ("去年去過哪些地方", "2025-01-01", "2025-12-31"),
        ("上個月看的電影", "2026-07-01", "2026-07-31"),
        ("上周末跟誰吃飯", "2026-08-08", "2026-08-09"),
        ("昨天說了什麼", "2026-08-11", "2026-08-11"),
    ],
)
def test_the_days_a_query_names_on_the_clock(query: str, first: str, last: str) -> None:
    assert named_days(query, NOW) == Days(date.fromisoformat(first), date.fromisoformat(last))


@pytest.mark.parametrize(
    "query", ["May I ask what you think?", "一個月前的事", "I marched on", "你好", "good morning"]
)
def test_no_time_named(query: str) -> None:
    assert named_days(query, NOW) is None


def test_a_hit_fits_the_days_or_the_slack_after() -> None:
    may = Days(date(2026, 5, 1), date(2026, 5, 31))
    assert fits("2026-05-31T23:00:00", may, 0)
    assert fits("2026-06-07", may, 7) and not fits("2026-06-08", may, 7)
    assert not fits("2026-04-30T23:59:59", may, 7)
    assert not fits("", may, 7)


# The same kind of thing said twice: last month, and more recently this month. "Last month"
# matches no word of the day's label ("[2026-07-16 Thursday, 16 July 2026]") that a record is
# indexed with, so only the time-word stage knows which month it means.
DAYS = {
    "2026-07-16": [
        ("user", "My sister and I went for a hike on the ridge trail", "jul1"),
        ("user", "我和姐姐去爬山，山頂的風景很美", "jul2"),
        ("user", "The printer at work ran out of toner again", "jul3"),
    ],
    "2026-08-10": [
        ("user", "We went hiking up the ridge trail with my brother", "aug1"),
        ("user", "我和哥哥去爬山，山頂的風景很美", "aug2"),
    ],
}


@pytest.fixture
def logged(library: Memory) -> Memory:
    root = library.service.paths(USER).root / "memory"
    root.mkdir(parents=True, exist_ok=True)
    for day, lines in DAYS.items():
        when = datetime.fromisoformat(f"{day}T10:00:00")
        body = log_header(day) + "".join(
            format_record(when + timedelta(seconds=20 * i), who, text, ref)
            for i, (who, text, ref) in enumerate(lines)
        )
        (root / f"{day}.md").write_text(body, encoding="utf-8")
        library.service.indexer.sync_file(USER, f"memory/{day}.md")
    return library


def _refs(library: Memory, query: str) -> list[str]:
    hits = library.service.searcher.search(USER, query, 5, now=NOW)
    return [h.chunk.refs[0] for h in hits]


@pytest.mark.parametrize(
    ("query", "july", "august"),
    [
        ("Where did I go hiking last month?", "jul1", "aug1"),
        ("上個月去爬山的時候", "jul2", "aug2"),
    ],
)
def test_the_hit_dated_in_the_named_time_comes_first(
    logged: Memory, query: str, july: str, august: str
) -> None:
    searcher = logged.service.searcher
    assert (searcher.config.date_weight, searcher.config.date_slack_days) == (0.1, 7)
    with_dates = _refs(logged, query)
    searcher.config = replace(searcher.config, date_weight=0.0)
    without = _refs(logged, query)
    # Without the time words the more recent telling ranks first ...
    assert without.index(august) < without.index(july)
    # ... with them last month's does; the stage reorders what passed on its own and
    # lets nothing in by its date alone.
    assert with_dates.index(july) < with_dates.index(august)
    assert set(with_dates) == set(without)


# What the patterns are made of: digits, 年/月/日, Chinese numerals, month names, spaces.
_PIECES = ("2023", "12", "1", "年", "月", "日", "號", "十", "三", " ", "\t", "May", "of ", "去")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12))
def test_a_100_kb_query_of_the_patterns_own_pieces_ends_in_seconds(pieces: list[str]) -> None:
    """A termination check, not a speed figure: 100 KB made of what the time patterns match
    (runs of spaces between digits and 年/月, numerals) is read in bounded time."""
    unit = "".join(pieces)
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    started = time.monotonic()
    found = named_days(text, NOW)
    assert time.monotonic() - started < 5
    assert found is None or found.first <= found.last


def test_a_time_word_after_100_kb_of_spaces_is_still_read() -> None:
    started = time.monotonic()
    assert named_days("2023年" + " " * 100_000 + "5月", NOW) is not None
    assert named_days(" " * 100_000 + "去年", NOW) == Days(date(2025, 1, 1), date(2025, 12, 31))
    assert time.monotonic() - started < 5
