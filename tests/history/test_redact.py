"""The redaction rules of forget: which units touch a forgotten memory and what is blanked."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from history.redact import Redactor, redact_log, redact_summaries, said_in_log
from history.sessions import Session
from memory.base.logs import format_record, log_header, parse_log

FORGOTTEN_TEXT = "My locker code at the climbing gym is behind the Zephyrine poster"
KEPT = ["I go to the climbing gym on Tuesdays"]


def test_whole_text_is_found_across_spacing_and_case() -> None:
    r = Redactor([FORGOTTEN_TEXT], KEPT)
    said = "fyi: my locker code at the climbing gym\n  is behind the ZEPHYRINE poster!"
    assert r(said) == "fyi: [forgotten]!"


def test_a_long_word_touches_alone_two_short_ones_together_kept_ones_never() -> None:
    r = Redactor([FORGOTTEN_TEXT], KEPT)
    assert "zephyrine" in r.terms and "climbing" not in r.terms  # a kept memory uses it
    assert r("Zephyrine again") == "[forgotten] again"  # 9 letters: rarely by chance
    assert r("where is my locker?") == "where is my locker?"  # one short word: left alone
    assert r("the locker poster") == "the [forgotten] [forgotten]"  # two: touched
    assert r("the climbing gym") == "the climbing gym"


def test_clipped_pieces_of_a_word_are_blanked_in_a_touched_unit() -> None:
    r = Redactor([FORGOTTEN_TEXT], KEPT)
    assert r("locker behind the Zephy…") == "[forgotten] [forgotten] the [forgotten]"


def test_chinese_words_count_too() -> None:
    r = Redactor(["我的置物櫃密碼藏在榅桲草海報後面"], ["我每週二去攀岩"])
    # No spaces to find the name by: every three characters of the text are looked for.
    assert r("他說海報上有榅桲草") == "他說海報上有[forgotten]"
    assert r("今天天氣很好") == "今天天氣很好"
    allergy = Redactor(["我對花生過敏"])
    assert allergy("你對花生過敏嗎？") == "你[forgotten]嗎？"
    assert allergy("花生醬很好吃") == "花生醬很好吃"  # one short word: left alone


def test_log_records_are_redacted_one_by_one_and_the_source_record_whole() -> None:
    when = datetime(2026, 3, 1, 9, 0, 0)
    text = log_header("2026-03-01")
    text += format_record(when, "user", "remember: behind the Zephyrine poster", "m1")
    text += format_record(when, "user", "unrelated line\nwith two lines", "m2")
    text += format_record(when, "user", "the Zephyrine one", "")
    r = Redactor([FORGOTTEN_TEXT, *said_in_log("2026-03-01", text, frozenset({"m1"}))], KEPT)

    new = redact_log("2026-03-01", text, r, frozenset({"m1"}))

    records = parse_log("2026-03-01", new)
    assert [(x.ref, x.text) for x in records] == [
        ("m1", "[forgotten]"),
        ("m2", "unrelated line\nwith two lines"),
        ("", "the [forgotten] one"),
    ]
    assert redact_log("2026-03-01", text, Redactor(["nothing like it"]), frozenset()) == text


def test_summary_blocks_that_do_not_touch_stay_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "auto_summaries.md"
    other = "## 閒置摘要 (b)\n\n- 摘要：Planned a  hike.\n- 關鍵字：hike、trail\n"
    path.write_text(
        "# 自動歸納\n\n## 閒置摘要 (a)\n\n- 摘要：Locker poster talk.\n"
        "- 關鍵字：Zephyrine、locker\n\n" + other,
        encoding="utf-8",
    )
    assert redact_summaries(path, Redactor([FORGOTTEN_TEXT], KEPT))
    after = path.read_text(encoding="utf-8")
    assert "Zephyrine" not in after and "- 關鍵字：[forgotten]、[forgotten]" in after
    assert after.endswith(other)
    assert not redact_summaries(path, Redactor([FORGOTTEN_TEXT], KEPT))  # nothing left to do


def test_session_message_named_by_id_is_blanked_whole() -> None:
    from history.redact import redact_session

    session = Session("cli_ann")
    session.append("user", "I want you to remember something", msg_id="7")
    session.append("assistant", "Sure, the Zephyrine poster.")
    session.append("user", "thanks", msg_id="8")
    assert redact_session(session, Redactor([FORGOTTEN_TEXT]), frozenset({"7"}))
    assert [m.content for m in session.messages] == [
        "[forgotten]",
        "Sure, the [forgotten] [forgotten].",
        "thanks",
    ]
