"""Chunking long text into 400-token windows with 80 tokens of overlap."""

from __future__ import annotations

import itertools

import pytest

from memory.base.tokens import EstimatingCounter, TokenCounter, load_counter
from memory.index.chunking import chunk_text

SENTENCES = [
    f"第{i}句：我們今天討論了部署流程與資料庫備份策略。Sentence {i} is about deploying on Friday. "
    for i in range(200)
]
LONG = "".join(SENTENCES)


@pytest.fixture(params=["tiktoken", "estimate"])
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    return load_counter() if request.param == "tiktoken" else EstimatingCounter()


def _overlap(prev: str, nxt: str) -> str:
    """The longest tail of ``prev`` that ``nxt`` starts with (ignoring edge whitespace)."""
    for start in range(len(prev)):
        tail = prev[start:].strip()
        if tail and nxt.startswith(tail):
            return tail
    return ""


def test_short_text_is_one_chunk(counter: TokenCounter) -> None:
    assert chunk_text("我喜歡咖啡 coffee", counter) == ["我喜歡咖啡 coffee"]
    assert chunk_text("   \n", counter) == []


def test_long_text_windows_fit_and_overlap(counter: TokenCounter) -> None:
    chunks = chunk_text(LONG, counter, 400, 80)
    assert counter.count(LONG) > 1600
    assert len(chunks) >= 5
    assert all(counter.count(c) <= 400 for c in chunks)
    # Windows are large, not slivers (the last one may be short).
    assert all(counter.count(c) >= 250 for c in chunks[:-1])
    for prev, nxt in itertools.pairwise(chunks):
        shared = _overlap(prev, nxt)
        assert shared, "consecutive chunks must share an overlap"
        assert 40 <= counter.count(shared) <= 80 + 2  # about 80 tokens, never much more
    # Nothing is lost: every sentence appears in some chunk.
    joined = "\n".join(chunks)
    for sentence in SENTENCES:
        assert sentence.strip()[:12] in joined


def test_text_without_boundaries_still_chunks(counter: TokenCounter) -> None:
    text = "咖" * 3000
    chunks = chunk_text(text, counter, 400, 80)
    assert len(chunks) > 1 and all(counter.count(c) <= 400 for c in chunks)
    assert sum(len(c) for c in chunks) >= len(text)


def test_bad_sizes_are_refused(counter: TokenCounter) -> None:
    with pytest.raises(ValueError):
        chunk_text("x", counter, 80, 80)
    with pytest.raises(ValueError):
        chunk_text("x", counter, 0, 0)
