"""Session lift: a matching idle summary lifts the candidate records of the stretch it names."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from history.idle import AUTO_REL, write_idle_summary
from history.summarize import IdleSummary
from memory import Memory
from memory.base.logs import format_record, log_header
from memory.base.spans import Span, idle_heading, parse_span
from memory.search.sessions import session_lift

USER = "tg_s"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
DAY = "2026-02-20"
# Two conversations on one day: the morning's is the trip the question is about.
MORNING = [
    # A statement: a bare question to the bot is no memory and is filtered (issue 24).
    ("user", "We should sort out the autumn trip this week", "m1"),
    ("bot", "Sure, what is still open?", "m2"),
    ("user", "I got us the ryokan near Gion for three nights", "m3"),
    ("bot", "Lovely, Gion is beautiful in November.", "m4"),
    ("user", "Unrelated, but the cat knocked the fern off the shelf again", "m5"),
    ("bot", "Poor fern. Maybe a higher shelf?", "m6"),
    ("user", "I will move it to the bookcase tonight", "m7"),
]
EVENING = [
    ("user", "I booked a table at the tapas bar for Friday", "e1"),
    ("bot", "Nice, which one?", "e2"),
    ("user", "The one by the river, and I booked train tickets to Porto too", "e3"),
]
QUERY = "What did I book for the trip to Kyoto?"


def _write(library: Memory) -> None:
    root = library.service.paths(USER).root
    (root / "memory").mkdir(parents=True, exist_ok=True)
    body = log_header(DAY)
    for start, lines in (("10:00:00", MORNING), ("18:00:00", EVENING)):
        when = datetime.fromisoformat(f"{DAY}T{start}")
        body += "".join(
            format_record(when + timedelta(seconds=20 * i), who, text, ref)
            for i, (who, text, ref) in enumerate(lines)
        )
        end = when + timedelta(seconds=20 * (len(lines) - 1))
        text = (
            "Planned the autumn trip to Kyoto: a ryokan near Gion for three nights; "
            "the cat broke a fern."
            if lines is MORNING
            else "Booked a Friday dinner at a tapas bar by the river and train tickets to Porto."
        )
        write_idle_summary(library.data_dir, USER, idle_heading(when, end), IdleSummary(text, ()))
    (root / "memory" / f"{DAY}.md").write_text(body, encoding="utf-8")
    library.service.indexer.sync_file(USER, f"memory/{DAY}.md")
    library.service.indexer.sync_file(USER, AUTO_REL)


@pytest.fixture
def indexed(library: Memory) -> Memory:
    _write(library)
    searcher = library.service.searcher
    # Alone, so what moves is the session lift; a shallow search, so not every record is a
    # candidate (LoCoMo's conversations have hundreds of records per user).
    searcher.config = replace(
        searcher.config, neighbour_hits=0, min_candidates=3, candidate_multiplier=1
    )
    return library


def _search(library: Memory) -> tuple[dict[str, float], dict[str, str]]:
    """Fused score of every candidate by ref, and the stage that dropped each dropped one."""
    res = library.service.searcher.search_explained(USER, QUERY, 3, now=NOW)
    fused = {h.chunk.refs[0]: h.stages["fusion"] for h in res.hits}
    fused.update({d.chunk.refs[0]: d.stages["fusion"] for d in res.dropped})
    return fused, {d.chunk.refs[0]: d.stage for d in res.dropped}


def test_the_heading_names_the_stretch_and_reads_back() -> None:
    start = datetime(2026, 2, 20, 23, 59, 40)
    heading = idle_heading(start, start + timedelta(seconds=40))
    assert heading == "閒置摘要 (2026-02-20 23:59:40 – 2026-02-21 00:00:20)"
    span = parse_span(heading)
    assert span == Span("2026-02-20T23:59:40", "2026-02-21T00:00:20")
    assert span.days() == ["2026-02-20", "2026-02-21"]
    assert span.holds("2026-02-21T00:00:00") and not span.holds("2026-02-21T00:00:21")
    assert parse_span("對話摘要 (2026-02-20)") is None  # a compaction block names no stretch
    assert parse_span("閒置摘要 (2026-02-20 10:00:00 – 2026-03-20 10:00:00)") is None


def test_only_records_in_a_matching_stretch_gain() -> None:
    heading = idle_heading(datetime(2026, 2, 20, 10), datetime(2026, 2, 20, 10, 1))
    records = [(1, "2026-02-20T10:00:20"), (2, "2026-02-20T18:00:00"), (3, "2026-02-20T10:01")]
    gain = session_lift([(heading, 0.6), ("Notes", 0.9)], records, 0.1)
    assert gain == {1: pytest.approx(0.06), 3: pytest.approx(0.06)}


def test_a_summary_hit_lifts_its_stretchs_closest_record(indexed: Memory) -> None:
    searcher = indexed.service.searcher
    lifted = searcher.config
    assert (lifted.session_hits, lifted.session_weight) == (3, 0.1)
    searcher.config = replace(lifted, session_hits=0)
    before, dropped_before = _search(indexed)
    searcher.config = lifted
    after, dropped_after = _search(indexed)
    summary = f"{AUTO_REL}#L3"  # the morning's summary: the best match, but no record
    assert max(after, key=after.__getitem__) == summary
    # The trip's record, a candidate, gains a tenth of the summary's score and is kept ...
    assert dropped_before["m1"] == "hard_min"
    assert "m1" not in dropped_after
    assert after["m1"] == pytest.approx(before["m1"] + 0.1 * after[summary])
    # ... the evening's candidates are outside the stretch and gain nothing ...
    assert after["e3"] == pytest.approx(before["e3"]) and "e3" in dropped_after
    # ... and the morning's records far from the question are no candidates: not lifted.
    assert not {"m5", "m6", "m7"} & (set(before) | set(after))
