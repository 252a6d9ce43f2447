"""Idle summaries: once per idle stretch, 3-5 keywords, indexed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from history.idle import IdleSummaries
from history.sessions import Session
from history.summarize import SummaryService
from memory.sources import summary_units
from memory.users import UserPaths
from tests.history.conftest import TAIPEI, HistoryKit

USER = "telegram_7"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def idle(kit: HistoryKit) -> IdleSummaries:
    s = kit.library
    return IdleSummaries(
        kit.sessions,
        s.data_dir,
        SummaryService(None),
        kit.history,
        TAIPEI,
        on_written=s.indexer.sync_file,
    )


def talk(kit: HistoryKit, start: datetime, lines: list[str]) -> None:
    session = kit.sessions.load(USER) if kit.sessions.exists(USER) else Session(USER)
    for i, line in enumerate(lines):
        session.append("user", line, start + timedelta(minutes=i))
        session.append("assistant", "好的 noted", start + timedelta(minutes=i, seconds=20))
    kit.sessions.save(session)


async def test_an_idle_session_is_summarised_once(kit: HistoryKit) -> None:
    job = idle(kit)
    talk(kit, T0, ["我想規劃京都旅行", "京都的住宿預算五萬元", "決定住在祇園附近，Kyoto hotel"])
    last = T0 + timedelta(minutes=2, seconds=20)
    assert await job.run(last + timedelta(minutes=59)) == []  # not idle long enough yet

    made = await job.run(last + timedelta(minutes=61))
    assert len(made) == 1 and 3 <= len(made[0].summary.keywords) <= 5
    assert "京都" in made[0].summary.keywords
    assert await job.run(last + timedelta(minutes=90)) == []  # never twice for one stretch
    assert await idle(kit).run(last + timedelta(hours=5)) == []  # nor after a restart

    path = UserPaths.of(kit.library.data_dir, USER).auto_summaries_md
    blocks = summary_units(path, "auto_summaries.md")
    assert len(blocks) == 1
    assert blocks[0].section == "閒置摘要 (2026-03-01 17:00:00 – 2026-03-01 17:02:20)"
    assert "關鍵字：" in blocks[0].text
    assert kit.sessions.load(USER).idle_summarized_through == last
    hits = kit.library.search(USER, "京都 住宿")
    assert any(h.chunk.path == "auto_summaries.md" for h in hits)

    # a new stretch later gets its own summary, covering only the new messages
    later = T0 + timedelta(hours=6)
    talk(kit, later, ["Let's talk about the Python asyncio scheduler", "APScheduler jobs"])
    made = await job.run(later + timedelta(hours=2))
    assert len(made) == 1 and made[0].messages == 4
    assert len(summary_units(path, "auto_summaries.md")) == 2


async def test_a_crash_before_the_session_was_saved_does_not_duplicate(kit: HistoryKit) -> None:
    job = idle(kit)
    talk(kit, T0, ["整理 NAS 的備份策略", "每週日凌晨備份到外接硬碟"])
    before = kit.sessions.load(USER)
    await job.run(T0 + timedelta(hours=3))
    kit.sessions.save(before)  # as if the process died before recording the stretch
    await job.run(T0 + timedelta(hours=4))
    path = UserPaths.of(kit.library.data_dir, USER).auto_summaries_md
    assert len(summary_units(path, "auto_summaries.md")) == 1
