"""The daily log record format: format_record and parse_log round trip."""

from __future__ import annotations

from datetime import datetime

from memory.base.logs import format_record, log_header, parse_log

DAY = "2026-11-22"


def at(h: int, m: int, s: int) -> datetime:
    return datetime(2026, 11, 22, h, m, s)


def test_round_trip_with_multi_line_and_refs() -> None:
    text = log_header(DAY)
    text += format_record(at(14, 3, 12), "user", "我喜歡喝咖啡", ref="tg-4711")
    text += format_record(at(14, 3, 15), "assistant", "a reply\nthat spans two lines\n第三行")
    text += format_record(at(14, 4, 0), "user", "mixed 中英 text: with a colon", ref="tg-4712")
    records = parse_log(DAY, text)
    assert [(r.time, r.who, r.text, r.ref) for r in records] == [
        ("14:03:12", "user", "我喜歡喝咖啡", "tg-4711"),
        ("14:03:15", "assistant", "a reply\nthat spans two lines\n第三行", ""),
        ("14:04:00", "user", "mixed 中英 text: with a colon", "tg-4712"),
    ]
    assert records[0].record_id == "tg-4711"
    assert records[1].record_id == f"{DAY}#L4"
    assert (records[1].line_start, records[1].line_end) == (4, 6)
    assert records[0].timestamp == f"{DAY}T14:03:12"


def test_literal_ref_in_user_text_is_not_taken_as_a_ref() -> None:
    text = format_record(at(9, 0, 0), "user", "look at this {#not-a-ref}")
    (rec,) = parse_log(DAY, text)
    assert rec.ref == ""
    assert rec.text == "look at this {#not-a-ref}"
    for text, ref in [("ends with {#}", ""), ("ends with {#}", "r1"), ("x {#a} ", "r2")]:
        (rec,) = parse_log(DAY, format_record(at(9, 0, 0), "user", text, ref=ref))
        assert (rec.text, rec.ref) == (text, ref)


def test_who_cannot_break_the_format() -> None:
    text = format_record(at(9, 0, 0), "evil: name\n- 09:00:01 x", "hello")
    assert text.count("\n") == 1
    (rec,) = parse_log(DAY, text)
    assert (rec.who, rec.text) == ("evil: name\n- 09:00:01 x", "hello")


def test_unknown_lines_are_skipped_and_hand_written_records_parse() -> None:
    text = "# 2026-11-22\n\nrandom note\n- 08:15 user: 早安\n  continued\n\n- garbage line\n"
    records = parse_log(DAY, text)
    assert [(r.time, r.text) for r in records] == [("08:15", "早安\ncontinued")]


def test_carriage_returns_stay_in_the_text() -> None:
    text = format_record(at(1, 2, 3), "user", "one\r\ntwo\rthree")
    assert "\r" not in text  # a reader would take it for a line break
    (rec,) = parse_log(DAY, text)
    assert rec.text == "one\r\ntwo\rthree"


def test_separators_are_written_readably() -> None:
    text = format_record(at(1, 2, 3), "user", " a\u2028b\x0cc \n\nd", ref="tg-1")
    assert text == "- 01:02:03 user: &#x20;a&#x2028;b&#xC;c&#x20;\n\n  d {#tg-1}\n"
    (rec,) = parse_log(DAY, text)
    assert (rec.text, rec.line_start, rec.line_end) == (" a\u2028b\x0cc \n\nd", 1, 3)


def test_a_log_written_before_the_codec_still_parses() -> None:
    # Empty continuation lines used to be written as two spaces; "&#x41;" was never escaped.
    text = "# 2026-11-22\n\n- 09:00:00 user: a\n  \n  b &amp; &#x41;\n- 09:01 user: c {#t-1}\n"
    records = parse_log(DAY, text)
    assert [(r.text, r.ref, r.line_end) for r in records] == [
        ("a\n\nb &amp; A", "", 5),
        ("c", "t-1", 6),
    ]
