"""Noise filter in Chinese and English."""

from __future__ import annotations

import pytest

from memory.search.noise import chunk_noise, is_noise, noise_reason


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("ok", "too_short"),
        ("好的", "too_short"),
        ("  hi  ", "too_short"),
        ("hello", "greeting"),
        ("Hello there!", "greeting"),
        ("HEARTBEAT", "greeting"),
        ("HEARTBEAT_OK all systems", "greeting"),
        ("你好你好啊", "greeting"),
        ("早安 大家好", "greeting"),
        ("I don't have any information about that.", "refusal"),
        ("I'm sorry, but I cannot help with that.", "refusal"),
        ("As an AI language model, I have no feelings.", "refusal"),
        ("我沒有相關的資料。", "refusal"),
        ("抱歉，我無法回答這個問題", "refusal"),
        ("作為一個AI，我不能這樣做", "refusal"),
        ("do you remember my dog?", "meta_question"),
        ("Did I tell you about my trip?", "meta_question"),
        ("你記得嗎？", "meta_question"),
        ("你還記得我上次說的嗎", "meta_question"),
        ("我喜歡藍色", None),
        ("I like drinking coffee in the morning", None),
        ("Hey Mel! I went to a support group yesterday and it was great", None),
        ("我記得你說過喜歡藍色的杯子", None),
        ("明天下午三點 dentist appointment", None),
    ],
)
def test_noise_reason(text: str, reason: str | None) -> None:
    assert noise_reason(text) == reason
    assert is_noise(text) is (reason is not None)


def test_long_text_mentioning_a_limitation_is_kept() -> None:
    text = "I don't have any information about the exact date, " + "but the trip was great. " * 12
    assert not is_noise(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("user: hello, how are you?", "greeting"),
        ("user: 你好嗎，最近怎麼樣？", "greeting"),
        ("user: do I have a cat?", "question"),
        ("user: 我的貓叫什麼名字？", "question"),
        ("user: 我喜歡烏龍茶嗎", "question"),
        ("user: /search tea", "command"),
        ("assistant: Saved to memory: you like oolong tea", "bot_meta"),
        ("bot: 好的，我記住了：你喜歡烏龍茶", "bot_meta"),
        # Said, not asked: kept.
        ("user: I got a cat. What should I call it?", None),
        ("user: 我養了一隻貓，叫小橘", None),
        # Two people talking (an imported dialogue): their questions are what was said.
        ("Caroline: What did you do with the kids yesterday?", None),
        ("bot: Thursday evenings are a good rhythm for practice.", None),
    ],
)
def test_chunk_noise_of_log_records(text: str, reason: str | None) -> None:
    assert chunk_noise(text, "log") == reason


def test_a_memory_is_never_judged_a_question() -> None:
    assert chunk_noise("我喜歡烏龍茶嗎", "memory") is None
