"""Promise 5, the masking function itself: a keyword never hides the secret behind it, and
masking what was masked changes nothing (every writer masks, and texts pass several writers).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.base.guards import REDACTED, mask

SECRET = "hunter2xyz"


@pytest.mark.parametrize(
    "text",
    [
        f"信件密碼是 password: {SECRET}",
        f"my email password is pw: {SECRET}",
        f"密碼：密碼 {SECRET}",
        f"the passcode is password {SECRET}",
        f"password password{SECRET}",  # a keyword that goes on into the value
        f"pin pin: {SECRET}",
        f"password: pW+{SECRET}",  # the value starts with a keyword and goes on
        f"password: pw-{SECRET}",
        f"clave:be8+{SECRET}",  # a separator word ("be") glued to the value is the value
    ],
)
def test_a_keyword_in_the_value_place_does_not_hide_the_secret(text: str) -> None:
    assert SECRET not in mask(text)


@pytest.mark.parametrize(
    "text",
    [
        f"password: {SECRET}",
        f"密碼是{SECRET}",
        "pin 1234 and otp 987654",
        f"pw: {REDACTED} and 驗證碼 556677",
    ],
)
def test_masking_twice_is_masking_once(text: str) -> None:
    once = mask(text)
    assert mask(once) == once
    assert "]]" not in mask(once)


_words = st.sampled_from(
    ["password", "密碼", "pin", "驗證碼", "is", ":", "是", SECRET, "1234", "hello", "咖啡", " "]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_words, max_size=12).map(" ".join))
def test_mask_is_idempotent_on_any_mix_of_keywords_and_values(text: str) -> None:
    once = mask(text)
    assert mask(once) == once
