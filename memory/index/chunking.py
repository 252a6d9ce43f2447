"""Cutting long text into overlapping token windows (400 tokens, 80 overlap by default)."""

from __future__ import annotations

from memory.base.tokens import TokenCounter


def chunk_text(text: str, counter: TokenCounter, size: int = 400, overlap: int = 80) -> list[str]:
    """Split ``text`` into pieces of at most ``size`` tokens, each overlapping the last.

    Short text comes back whole. Cuts prefer a line or sentence end inside the window so a
    chunk rarely stops mid-sentence.
    """
    if size <= 0 or overlap >= size:
        raise ValueError("chunk size must be positive and larger than the overlap")
    if counter.count(text) <= size:
        return [text] if text.strip() else []
    chunks: list[str] = []
    rest = text
    while rest.strip():
        piece = counter.truncate(rest, size)
        if len(piece) < len(rest):
            piece = _cut_at_boundary(piece)
        chunks.append(piece.strip())
        if len(piece) >= len(rest):
            break
        back = _tail_tokens(piece, counter, overlap)
        step = max(1, len(piece) - len(back))
        rest = rest[step:]
    return [c for c in chunks if c]


_BOUNDARIES = ("\n", "。", "！", "？", ". ", "! ", "? ", "；", "; ")


def _cut_at_boundary(piece: str) -> str:
    best = -1
    for mark in _BOUNDARIES:
        pos = piece.rfind(mark)
        if pos > best:
            best = pos + len(mark)
    # Only take the boundary when it keeps most of the window.
    return piece[:best] if best > len(piece) * 0.6 else piece


def _tail_tokens(piece: str, counter: TokenCounter, tokens: int) -> str:
    lo, hi = 0, len(piece)
    while lo < hi:
        mid = (lo + hi) // 2
        if counter.count(piece[mid:]) <= tokens:
            hi = mid
        else:
            lo = mid + 1
    return piece[lo:]
