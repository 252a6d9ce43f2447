"""The compaction note fits its share of ``compaction_prompt_tokens``, however long the gist."""

from __future__ import annotations

from datetime import UTC, datetime

from history.compaction_note import MESSAGE_OVERHEAD_TOKENS, NOTE_PREFIX, note_limit, note_text
from history.config import HistoryConfig
from history.context import HistoryWindow, fit_note, summary_room
from history.sessions import KIND_COMPACTION, ROLE_SYSTEM, ROLE_USER, Message
from memory.base.tokens import load_counter

COUNTER = load_counter()
T0 = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)
POINTER = "MEMORY_FULL.md § 對話摘要 (2026-02-09)、memory/2026-02-09.md"
LONG_GIST = "主題：京都旅行、NAS 備份、健身計畫；決定：" + "先確認目前的設定再逐步調整，" * 30


def cost(text: str) -> int:
    return COUNTER.count(text) + MESSAGE_OVERHEAD_TOKENS


def test_a_long_gist_is_cut_and_the_pointer_kept() -> None:
    limit = note_limit(HistoryConfig())
    assert limit == 75  # half of the default 150
    text = note_text(LONG_GIST, POINTER, COUNTER, limit, earlier=True)
    assert cost(text) <= limit
    assert text.startswith(f"{NOTE_PREFIX} 摘要：主題：京都旅行")
    assert text.endswith(f"…（{POINTER}，及更早的摘要）")
    assert cost(f"{NOTE_PREFIX} 摘要：{LONG_GIST}（{POINTER}）") > 4 * limit  # it was cut


def test_a_short_gist_is_kept_whole() -> None:
    text = note_text("主題：NAS 備份", POINTER, COUNTER, 75)
    assert text == f"{NOTE_PREFIX} 摘要：主題：NAS 備份（{POINTER}）"


def test_a_budget_below_the_pointer_still_holds() -> None:
    for limit in (5, 12, 30):
        text = note_text(LONG_GIST, POINTER, COUNTER, limit)
        assert text and NOTE_PREFIX.startswith(text[:3]) and cost(text) <= limit
    assert note_text(LONG_GIST, POINTER, COUNTER, 4) == ""  # only the message overhead: none


def window(note: str) -> HistoryWindow:
    msg = Message(ROLE_SYSTEM, note, T0, kind=KIND_COMPACTION)
    return HistoryWindow(msg, (), (Message(ROLE_USER, "hi", T0),))


def test_a_note_written_before_the_budget_is_cut_when_the_prompt_is_built() -> None:
    old = f"{NOTE_PREFIX} 摘要：{LONG_GIST}。詳見 {POINTER}。"
    fitted = fit_note(window(old), COUNTER, 75)
    assert fitted.note is not None and cost(fitted.note.content) <= 75
    assert old.startswith(fitted.note.content) and fitted.recent == window(old).recent
    short = window(f"{NOTE_PREFIX} 摘要：NAS（{POINTER}）")
    assert fit_note(short, COUNTER, 75) is short  # a note that fits is left alone
    assert fit_note(window(old), COUNTER, 0).note is None  # no budget: no note in the prompt


def test_the_summaries_get_what_the_shown_note_leaves() -> None:
    config = HistoryConfig()
    shown = fit_note(window(f"{NOTE_PREFIX} 摘要：{LONG_GIST}"), COUNTER, 75).note
    assert shown is not None
    left = summary_room(window(f"{NOTE_PREFIX} 摘要：{LONG_GIST}"), COUNTER, config)
    assert left == 150 - cost(shown.content) >= 75
    no_note = HistoryWindow(None, (), (Message(ROLE_USER, "hi", T0),))
    assert summary_room(no_note, COUNTER, config) == 150
