"""A message names a section by one of its words: English ones whole, Chinese ones anywhere."""

from __future__ import annotations

import pytest

from history.section_words import named

WORDS = ["coffee", "咖啡", "to-do"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Decaf COFFEE, please!", True),
        ("coffee", True),
        ("my to-do list", True),
        ("我想喝咖啡店的拿鐵", True),
        ("coffees and decoffee", False),  # inside a longer word
        ("1coffee coffee2 xto-do", False),
        ("tea", False),
    ],
)
def test_a_word_names_the_section_only_as_a_whole_word(message: str, expected: bool) -> None:
    assert named(message, WORDS) is expected
