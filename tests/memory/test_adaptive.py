"""Adaptive retrieval (docs/retrieval.md) on a table of zh/en/mixed messages."""

from __future__ import annotations

import pytest

from memory.adaptive import decide_retrieval
from memory.config import AdaptiveConfig

CFG = AdaptiveConfig()

# (message, turn, expected retrieve, expected reason). Turn 1 unless the row tests the period.
TABLE = [
    ("你還記得我喜歡什麼嗎", 1, True, "force_pattern"),
    ("記得嗎", 1, True, "force_pattern"),
    ("上次說的那家店", 1, True, "force_pattern"),
    ("之前提過的書", 1, True, "force_pattern"),
    ("我的歷史紀錄", 1, True, "force_pattern"),
    ("过去的计划", 1, True, "force_pattern"),
    ("咖啡和茶我該選擇哪個", 1, True, "force_pattern"),
    ("幫我比較這兩台筆電", 1, True, "force_pattern"),
    ("我要決定下週去哪", 1, True, "force_pattern"),
    ("do you remember my dog", 1, True, "force_pattern"),
    ("As I previously said", 1, True, "force_pattern"),
    ("which laptop", 1, True, "force_pattern"),
    ("Should I take the job", 1, True, "force_pattern"),
    ("compare these", 1, True, "force_pattern"),
    ("上次 meeting 的 notes", 1, True, "force_pattern"),
    ("remember 我的生日", 1, True, "force_pattern"),
    ("/start", 1, False, "system_command"),
    ("/remember buy milk", 1, True, "force_pattern"),
    ("/help", 5, False, "system_command"),
    ("HEARTBEAT", 1, False, "system_command"),
    ("heartbeat ok", 5, False, "system_command"),
    ("ok", 1, False, "too_short"),
    ("好的", 1, False, "too_short"),
    ("嗯", 5, False, "too_short"),
    ("hi", 1, False, "too_short"),
    ("你好", 1, False, "too_short"),
    ("👍", 1, False, "too_short"),
    ("hello", 1, False, "greeting_or_ack"),
    ("Hello there!", 1, False, "greeting_or_ack"),
    ("thank you so much", 1, False, "greeting_or_ack"),
    ("Good morning!!", 1, False, "greeting_or_ack"),
    ("你好你好！", 1, False, "greeting_or_ack"),
    ("謝謝你喔！！", 1, False, "greeting_or_ack"),
    ("okay!!", 1, False, "greeting_or_ack"),
    ("hello", 5, True, "periodic"),
    ("好的好的好的", 10, True, "periodic"),
    ("😀😀😀😀😀", 1, False, "emoji_only"),
    ("🎉🎉 !! 🎉🎉", 1, False, "emoji_only"),
    ("今天很累", 1, False, "too_short"),
    ("今天好累喔", 1, False, "short_no_question"),
    ("今天喝什麼？", 1, True, "default"),
    ("nice weather", 1, False, "short_no_question"),
    ("what is my cat?", 1, True, "default"),
    ("我最喜歡的顏色是什麼", 1, True, "default"),
    ("Tell me about my trip to Japan", 1, True, "default"),
    ("明天 meeting 要帶 laptop", 1, True, "default"),
    ("coffee or tea?", 1, True, "default"),
    ("I have a dentist appointment on Friday", 1, True, "default"),
    ("週末要去台南玩三天", 1, True, "default"),
    ("my sister's name is Amy", 1, True, "default"),
]


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 40


@pytest.mark.parametrize(("text", "turn", "retrieve", "reason"), TABLE)
def test_decision(text: str, turn: int, retrieve: bool, reason: str) -> None:
    decision = decide_retrieval(text, turn=turn, config=CFG)
    assert (decision.retrieve, decision.reason) == (retrieve, reason)


def test_periodic_can_be_switched_off() -> None:
    cfg = AdaptiveConfig(force_every_turns=0)
    assert decide_retrieval("hello", turn=5, config=cfg).reason == "greeting_or_ack"


def test_thresholds_come_from_config() -> None:
    cfg = AdaptiveConfig(min_other_chars=5)
    assert decide_retrieval("nice weather", turn=1, config=cfg).retrieve
