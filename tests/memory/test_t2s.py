"""Traditional Chinese folded to Simplified for e5's eyes (memory.index.t2s)."""

from __future__ import annotations

from memory.index.t2s import to_simplified


def test_traditional_chinese_is_written_in_simplified_characters() -> None:
    assert to_simplified("我平常喜歡喝什麼飲料呢？") == "我平常喜欢喝什么饮料呢？"
    assert (
        to_simplified("之前關於 Tokyo 的旅行計畫是什麼？") == "之前关于 Tokyo 的旅行计划是什么？"
    )


def test_a_phrase_is_folded_as_a_phrase_before_its_characters() -> None:
    # 乾 alone is 干 (dry), but 乾隆 is a name that keeps it; 頭髮 -> 头发, 著作 keeps 著.
    assert to_simplified("乾杯") == "干杯"
    assert to_simplified("乾隆皇帝的頭髮") == "乾隆皇帝的头发"
    assert to_simplified("著作權") == "著作权"


def test_text_with_nothing_to_fold_comes_back_as_it_is() -> None:
    for text in ("", "I drink oolong tea 🍵", "我们决定用 SQLite", "ひらがな", "。" * 50):
        assert to_simplified(text) == text
