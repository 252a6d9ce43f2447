"""The idle summary's heading names exactly the stretch of the daily log it summarises.

The session lift (memory/search/sessions.py) finds a summary's records by that stretch, so
the heading and the log must be written on the same clock: the user's zone, whatever zone the
messages' times carry. A stretch across midnight (local) touches two log files.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from history.idle import IdleSummaries
from history.sessions import Session
from history.summarize import SummaryService
from memory.base.logs import parse_log
from memory.base.spans import parse_span
from memory.base.users import UserPaths
from memory.index.sources import summary_units
from tests.history.conftest import TAIPEI, HistoryKit

USER = "telegram_8"
# 23:58 in Taipei: the stretch runs over local midnight.
T0 = datetime(2026, 3, 1, 15, 58, tzinfo=UTC)
LINES = ["Planning the Kyoto trip", "Booked the ryokan near Gion", "Three nights in November"]


async def test_every_logged_message_of_the_stretch_lies_in_its_heading(kit: HistoryKit) -> None:
    session = Session(USER)
    for i, line in enumerate(LINES):
        when = T0 + timedelta(minutes=i, seconds=7)
        session.append("user", line, when)
        kit.daily_log.append_user_message(USER, line, when, f"m{i}")
        session.append("assistant", "noted", when + timedelta(seconds=20))
    kit.sessions.save(session)
    job = IdleSummaries(
        kit.sessions, kit.library.data_dir, SummaryService(None), kit.history, TAIPEI
    )
    end = T0 + timedelta(minutes=len(LINES) - 1, seconds=27)
    assert len(await job.run(end + timedelta(hours=2))) == 1

    paths = UserPaths.of(kit.library.data_dir, USER)
    (block,) = summary_units(paths.auto_summaries_md, "auto_summaries.md")
    span = parse_span(block.section)
    assert span is not None and span.days() == ["2026-03-01", "2026-03-02"]
    logged = [
        rec
        for day in span.days()
        for rec in parse_log(day, paths.daily_log(day).read_text(encoding="utf-8"))
    ]
    assert [r.ref for r in logged] == ["m0", "m1", "m2"]
    assert all(span.holds(r.timestamp) for r in logged)
    # ... and a message a second before or after the stretch is outside it.
    assert not span.holds("2026-03-01T23:58:06") and not span.holds("2026-03-02T00:00:28")
