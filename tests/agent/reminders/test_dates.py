"""Birthdays and anniversaries in a memory's text, and the "remind the day before" offer."""

from __future__ import annotations

import pytest

from agent.reminders.dates import find_recurring_date


@pytest.mark.parametrize(
    ("text", "month", "day", "label", "rule"),
    [
        ("媽媽生日是5月3日", 5, 3, "媽媽生日", "yearly 5-2 09:00"),
        ("my mother's birthday is 3 May", 5, 3, "my mother's birthday", "yearly 5-2 09:00"),
        ("結婚紀念日 10/12", 10, 12, "結婚紀念日", "yearly 10-11 09:00"),
        ("我們的結婚週年是十月十二日。", 10, 12, "我們的結婚週年", "yearly 10-11 09:00"),
        ("Alice's birthday is on March 1st", 3, 1, "Alice's birthday", "yearly 2-29 09:00"),
        ("爸爸的生日在 2/29", 2, 29, "爸爸的生日", "yearly 2-28 09:00"),
        ("His bday: Dec 31", 12, 31, "His bday", "yearly 12-30 09:00"),
        ("我喜歡藍色，媽媽生日是1月1日", 1, 1, "媽媽生日", "yearly 12-31 09:00"),
        ("Our anniversary is June 5th, 2015", 6, 5, "Our anniversary", "yearly 6-4 09:00"),
    ],
)
def test_recurring_dates_are_found(text: str, month: int, day: int, label: str, rule: str) -> None:
    offer = find_recurring_date(text)
    assert offer is not None
    assert (offer.month, offer.day, offer.label, offer.rule.encode()) == (month, day, label, rule)
    assert label in offer.text and label in offer.question_zh and label in offer.question_en


@pytest.mark.parametrize(
    "text",
    [
        "I like coffee",
        "會議在5月3日",  # a date, but no occasion that comes back every year
        "生日快樂",  # an occasion, but no date
        "birthday on 2/30",  # not a date
        "我喜歡藍色。媽媽生日還沒問",
    ],
)
def test_no_offer_without_an_occasion_and_a_real_date(text: str) -> None:
    assert find_recurring_date(text) is None


def test_the_ringing_text_is_in_the_labels_own_language() -> None:
    en = find_recurring_date("my sister Anna's birthday is March 3")
    zh = find_recurring_date("媽媽的生日是5月3日")
    assert en is not None and zh is not None
    assert en.text == "Tomorrow: my sister Anna's birthday (3 March)"
    assert zh.text == "明天是媽媽的生日（5月3日）"
