"""Compaction summary hits are cut to their pieces about the message, within their budget."""

from __future__ import annotations

from agent.selection import L2, Candidate, fit_summaries, render_line
from memory.base.tokens import load_counter

COUNTER = load_counter()
BLOCK = (
    "對話摘要 (2026-02-09)\n"
    "- **主題：** 京都旅行、NAS 備份、健身計畫\n"
    "- **重點：** 京都的飯店訂在祇園，訂位代號 KY-4821；NAS 用 RAID 1；每週三次深蹲\n"
    "- **決定：** 採用 rsync nightly，因為上次試了 12 次都比較穩定\n"
    "- **待辦：** check Backblaze B2 before 3 March\n"
    "- **數字：** 4821、12、3；**人名：** 林經理"
)
SUMMARY = Candidate(
    "MEMORY_FULL.md#L3", L2, 0.6, BLOCK, source="MEMORY_FULL.md", date="2026-02-09"
)
LOG = Candidate(
    "memory/2026-02-09.md#u1", L2, 0.5, "user: 京都的飯店訂在祇園", source="memory/2026-02-09.md"
)
RECORD = Candidate(
    "memory/2026-02-09.md#s1",
    L2,
    0.4,
    "summary: 本段討論摘要：主題：京都旅行；決定：採用 rsync nightly（詳見 MEMORY_FULL.md）",
    source="memory/2026-02-09.md",
)


def cost(cands: list[Candidate]) -> int:
    return sum(COUNTER.count(render_line(c, c.text)) + 1 for c in cands)


def test_the_piece_the_question_asks_about_is_kept_and_the_rest_cut() -> None:
    out = fit_summaries([SUMMARY, LOG], "京都飯店的訂位代號是什麼？", COUNTER, 60)
    summary, log = out
    assert log == LOG  # other hits pass unchanged
    assert "KY-4821" in summary.text and "rsync" not in summary.text
    assert "對話摘要 (2026-02-09)" not in summary.text  # the line's date says it
    assert summary.summary == summary.text  # the budget step cannot bring the block back
    assert cost([summary]) <= 60 < COUNTER.count(render_line(SUMMARY, BLOCK))


def test_the_summaries_share_the_budget_and_one_that_does_not_fit_goes() -> None:
    query = "rsync nightly 的決定是什麼？"
    both = fit_summaries([SUMMARY, RECORD, LOG], query, COUNTER, 200)
    assert [c.id for c in both] == [SUMMARY.id, RECORD.id, LOG.id]
    assert cost(both[:2]) <= 200 and all("rsync" in c.text for c in both[:2])
    tight = fit_summaries([SUMMARY, RECORD, LOG], query, COUNTER, cost(both[:1]))
    assert [c.id for c in tight] == [SUMMARY.id, LOG.id]  # the log's record did not fit
    assert fit_summaries([SUMMARY, LOG], query, COUNTER, 5) == [LOG]


def test_with_no_piece_about_the_message_the_topic_stands_for_the_summary() -> None:
    [summary] = fit_summaries([SUMMARY], "weather tomorrow?", COUNTER, 200)
    assert summary.text == "**主題：** 京都旅行、NAS 備份、健身計畫"
