"""The text memo: computed once per text, bounded by the characters it holds."""

from __future__ import annotations

from memory.base.memo import TextMemo


def test_a_text_is_computed_once_and_old_texts_leave_past_the_budget() -> None:
    calls: list[str] = []

    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    memo = TextMemo(upper, budget=80)
    assert memo("a" * 10) == "A" * 10 and memo("a" * 10) == "A" * 10
    assert calls == ["a" * 10]
    for ch in "bcdefghij":  # 9 more texts of 10 characters: "a" * 10 is pushed out
        memo(ch * 10)
    assert memo.used <= 80
    memo("a" * 10)
    assert calls.count("a" * 10) == 2


def test_a_huge_text_is_computed_but_not_kept() -> None:
    memo = TextMemo(len, budget=80)
    assert memo("x" * 11) == 11 and memo.used == 0
