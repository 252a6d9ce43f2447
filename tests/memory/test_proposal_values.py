"""A proposal's numeric fields hold numbers: anything else is one refusal, never a crash.

An import handed ``user_weight: 1e400`` (JSON's infinity) to the confirmation service, which
raised OverflowError (issue 28, item 10); "heavy", NaN, a bool or a list are refused alike.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory import Memory
from memory.errors import InvalidProposalError

ALICE = "telegram_1001"
NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("user_weight", float("inf")),
        ("user_weight", float("-inf")),
        ("user_weight", float("nan")),
        ("user_weight", "heavy"),
        ("user_weight", True),
        ("user_weight", [3]),
        ("importance", float("inf")),
        ("importance", "very"),
        ("is_core", 1e400),
        ("is_core", "yes"),
    ],
)
def test_a_field_that_is_no_number_is_refused(library: Memory, name: str, value: object) -> None:
    with pytest.raises(InvalidProposalError) as refused:
        library.confirm.propose(ALICE, "I like green tea", now=NOW, fields={name: value})
    assert refused.value.code == "refused_value" and refused.value.fields == {"field": name}
    assert library.confirm.pending(ALICE) == []


def test_numbers_in_range_and_numeric_text_still_count(library: Memory) -> None:
    p = library.confirm.propose(
        ALICE, "I like green tea", now=NOW, fields={"user_weight": "12", "importance": 0.4}
    )
    assert p.fields["user_weight"] == 10 and p.fields["importance"] == 0.4
