"""The redaction rules of forget: what a copy is, what stays, and how undo puts it back."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from history.redact import (
    Journal,
    Redactor,
    redact_log,
    redact_session,
    redact_summaries,
    restore_log,
    restore_session,
    restore_summaries,
    said_in_log,
)
from history.sessions import Session
from memory.base.logs import format_record, log_header, parse_log

FORGOTTEN_TEXT = "My locker code at the climbing gym is behind the Zephyrine poster"
KEPT = ["I go to the climbing gym on Tuesdays"]
TEA = "我每天早上喝烏龍茶"
ANNA = "my sister Anna's birthday is March 3"


def test_whole_text_is_found_across_spacing_and_case() -> None:
    r = Redactor([FORGOTTEN_TEXT], KEPT)
    said = "fyi: my locker code at the climbing gym\n  is behind the ZEPHYRINE poster!"
    assert r(said) == "fyi: [forgotten]!"


def test_questions_and_shared_words_are_not_copies() -> None:
    # The lines: words of the memory inside other sentences stay as they are.
    tea, anna = Redactor([TEA]), Redactor([ANNA])
    assert tea("我每天早上喝什麼？") == "我每天早上喝什麼？"
    assert anna("when is Anna's birthday?") == "when is Anna's birthday?"
    assert anna("when is my sister Anna's birthday?") == "when is my sister Anna's birthday?"
    assert Redactor([FORGOTTEN_TEXT])("Zephyrine again") == "Zephyrine again"


def test_near_duplicates_go_whole_with_their_label_and_end_kept() -> None:
    tea, anna = Redactor([TEA]), Redactor([ANNA])
    assert tea("用戶每天早上喝烏龍茶。好的") == "[forgotten]。好的"
    assert anna("Noted. Your sister Anna's birthday is on March 3!") == "Noted. [forgotten]!"
    assert anna("- 摘要：Sister Anna's birthday: March 3\n- 下一步：買禮物") == (
        "- 摘要：[forgotten]\n- 下一步：買禮物"
    )
    assert (
        anna("Remember: my sister Anna's birthday is March 3, ok?") == "Remember: [forgotten], ok?"
    )


def test_a_clipped_piece_of_the_text_is_a_copy() -> None:
    r = Redactor([FORGOTTEN_TEXT])
    assert r("- my locker code at the clim…") == "- [forgotten]…"
    assert r("- my locker…") == "- my locker…"  # too short to say whose it is


def test_what_a_kept_memory_says_is_never_a_copy() -> None:
    r = Redactor(["I drink oolong tea every morning"], ["I drink green tea every morning"])
    assert r("I drink green tea every morning") == "I drink green tea every morning"
    assert r("Users drinks oolong tea every morning.") == "[forgotten]."
    inside = Redactor(["I drink tea"], ["I drink tea with my mother on Sundays"])
    assert (
        inside("I drink tea with my mother on Sundays") == "I drink tea with my mother on Sundays"
    )
    assert inside("and I drink tea") == "and [forgotten]"


def test_a_keyword_line_loses_only_what_the_blanked_copy_named() -> None:
    r = Redactor([FORGOTTEN_TEXT])
    block = (
        "## 閒置摘要 (a)\n\n- 摘要：The locker code at the climbing gym is behind the Zephyrine"
        " poster.\n- 關鍵字：Zephyrine、locker、climbing\n"
    )
    assert r(block) == "## 閒置摘要 (a)\n\n- 摘要：[forgotten].\n- 關鍵字：\n"
    untouched = "## b\n\n- 摘要：Climbing on Tuesday.\n- 關鍵字：locker、climbing\n"
    assert r(untouched) == untouched  # no copy in the block: its keywords are its own
    assert r("關鍵字：Zephyrine、hike") == "關鍵字：hike"  # a keyword line on its own


def test_log_records_are_redacted_one_by_one_and_undo_puts_them_back() -> None:
    when = datetime(2026, 3, 1, 9, 0, 0)
    text = log_header("2026-03-01")
    text += format_record(when, "user", "remember: behind the Zephyrine poster", "m1")
    text += format_record(when, "user", "where is the Zephyrine poster?", "m2")
    text += format_record(when, "assistant", FORGOTTEN_TEXT.lower() + ".", "")
    said = said_in_log("2026-03-01", text, frozenset({"m1"}))
    journal = Journal()

    new = redact_log(
        "2026-03-01", text, Redactor([FORGOTTEN_TEXT, *said], KEPT), frozenset({"m1"}), journal
    )

    assert [(x.ref, x.text) for x in parse_log("2026-03-01", new)] == [
        ("m1", "[forgotten]"),
        ("m2", "where is the Zephyrine poster?"),
        ("", "[forgotten]."),
    ]
    later = new + format_record(when, "user", "a new message meanwhile", "m3")
    assert restore_log("2026-03-01", later, Journal.from_json(journal.to_json())) == (
        text + format_record(when, "user", "a new message meanwhile", "m3")
    )


def test_summary_blocks_and_the_session_come_back_on_undo(tmp_path: Path) -> None:
    path = tmp_path / "auto_summaries.md"
    other = "## 閒置摘要 (b)\n\n- 摘要：Planned a  hike.\n- 關鍵字：hike、trail\n"
    original = (
        f"# 自動歸納\n\n## 閒置摘要 (a)\n\n- 摘要：{ANNA}.\n- 關鍵字：Anna、birthday\n\n" + other
    )
    path.write_text(original, encoding="utf-8")
    journal = Journal()
    assert redact_summaries(path, Redactor([ANNA]), journal)
    assert path.read_text(encoding="utf-8").endswith(other) and ANNA not in path.read_text("utf-8")
    assert not redact_summaries(path, Redactor([ANNA]))  # nothing left to do
    assert restore_summaries(path, journal) and path.read_text(encoding="utf-8") == original

    session = Session("cli_ann")
    session.append("user", "I want you to remember something", msg_id="7")
    session.append("assistant", f"Sure: {ANNA}.")
    session.append("user", "when is Anna's birthday?", msg_id="8")
    before = [m.content for m in session.messages]
    assert redact_session(session, Redactor([ANNA]), frozenset({"7"}), journal)
    assert [m.content for m in session.messages] == [
        "[forgotten]",
        "Sure: [forgotten].",
        "when is Anna's birthday?",
    ]
    assert restore_session(session, journal) and [m.content for m in session.messages] == before


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=6))
def test_undo_gives_back_any_log_exactly(lines: list[str]) -> None:
    when = datetime(2026, 3, 1, 9, 0, 0)
    text = log_header("2026-03-01")
    for n, line in enumerate(lines):
        text += format_record(when, "user", line + (f" {ANNA}" if n % 2 else ""), f"r{n}")
    journal = Journal()
    new = redact_log("2026-03-01", text, Redactor([ANNA]), frozenset({"r0"}), journal)
    assert ANNA not in new
    assert restore_log("2026-03-01", new, journal) == text


def test_adversarial_100_kb_units_finish_in_bounded_time() -> None:
    # A termination check (not a benchmark): runs of what the sentence, label and keyword
    # rules look at, 100 KB each, through one redactor.
    r = Redactor([ANNA, TEA], ["I drink green tea every morning"])
    units = [
        "my sister " * 10_000,
        " " * 100_000,
        "- " * 50_000,
        "a) " * 33_000,
        "。" * 100_000,
        "關鍵字：" + "、Anna" * 20_000,
        "x:" * 50_000,
        "烏" * 100_000,
        f"{ANNA}. " * 2_700,
    ]
    start = time.monotonic()
    out = [r(u) for u in units]
    assert time.monotonic() - start < 10
    assert out[-1].count("[forgotten]") == 2_700 and out[0] == units[0]
