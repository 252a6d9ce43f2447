"""The user's "這很重要" / "this is important" proposes a higher weight (issue 13, item 2)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.app import Services
from memory.write.emphasis import CORE, IMPORTANT, MODEL_MAX_WEIGHT, emphasis, model_weight

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("said", "weight", "text"),
    [
        ("這很重要：我對花生過敏", IMPORTANT, "我對花生過敏"),
        ("我對花生過敏，這很重要！", IMPORTANT, "我對花生過敏"),
        ("這件事很重要，下週三交報告", IMPORTANT, "下週三交報告"),
        ("非常重要：回答一律用繁體中文", CORE, "回答一律用繁體中文"),
        ("千萬要記得：媽媽生日是 3/14", CORE, "媽媽生日是 3/14"),
        ("remember, this is important: I am allergic to peanuts", IMPORTANT,
         "remember, I am allergic to peanuts"),
        ("Important: my passport expires in May", IMPORTANT, "my passport expires in May"),
        ("this is very important! no peanuts in my food", CORE, "no peanuts in my food"),
        ("never forget: mom's birthday is March 14", CORE, "mom's birthday is March 14"),
        # A word inside a fact is not emphasis.
        ("重要的會議在週五下午", None, "重要的會議在週五下午"),
        ("my important meeting is on Friday", None, "my important meeting is on Friday"),
        ("it is important that I sleep eight hours", None,
         "it is important that I sleep eight hours"),
        ("The deploy is critical.", None, "The deploy is critical."),
        ("我喜歡藍色", None, "我喜歡藍色"),
    ],
)  # fmt: skip
def test_emphasis_table(said: str, weight: int | None, text: str) -> None:
    got = emphasis(said)
    assert (got.weight, got.text) == (weight, text)


def test_the_model_cannot_make_a_memory_core() -> None:
    assert model_weight(10) == MODEL_MAX_WEIGHT < CORE
    assert model_weight("7") == 7 and model_weight(0) == 1 and model_weight("lots") is None


def test_remember_with_emphasis_proposes_the_weight_and_shows_it(services: Services) -> None:
    p = services.confirm.propose("telegram_5", "這很重要：我對花生過敏", now=T0)
    assert p.text == "我對花生過敏" and p.fields["user_weight"] == IMPORTANT
    plain = services.confirm.propose("telegram_5", "我喜歡藍色的杯子", now=T0)
    assert "user_weight" not in plain.fields
    core = services.confirm.propose("telegram_5", "非常重要：回答一律用繁體中文", now=T0)
    entry = services.confirm.confirm(
        services.user_acts.act("telegram_5", core.id, "confirm", via="button"), now=T0
    )
    assert entry.user_weight == CORE and entry.text == "回答一律用繁體中文"
