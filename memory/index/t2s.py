"""Traditional Chinese written in Simplified, for the embedder's eyes only (OpenCC's tables).

multilingual-e5 learned its Chinese mostly from Simplified text, and orders Traditional text
worse (bench/RESULTS.md, MADial in Traditional Chinese: e5's order of one person's memories,
R@6 0.529 Traditional, 0.569 the same text in Simplified). The fold is used where only the
order among memories is decided (:mod:`memory.index.views`, :func:`agent.query.memory_order`);
what the person wrote, the index's passage vectors and the search's thresholds never see it.

The tables are OpenCC's ``TSPhrases`` and ``TSCharacters`` (Apache-2.0) as shipped in the PyPI
package ``opencc-python-reimplemented``; its converter is not used: it searches each stretch
for its longest phrase anywhere, quadratic on a long line. Here the phrases match forward,
longest first (as OpenCC's own C++ does), at the positions a phrase can start, and every other
character goes through one ``str.translate``: linear in the text, bounded by the longest phrase.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from importlib import resources

# The tables as OpenCC's t2s conversion chains them: phrases first, then characters.
_PACKAGE = "opencc"
_PHRASES = "dictionary/TSPhrases.txt"
_CHARACTERS = "dictionary/TSCharacters.txt"


@dataclass(frozen=True, slots=True)
class _Tables:
    """The tables, read once."""

    chars: dict[int, str]  # str.translate's map: code point -> Simplified
    phrases: dict[str, str]  # Traditional phrase -> Simplified
    lengths: dict[str, tuple[int, ...]]  # a phrase's first character -> its lengths, longest first
    starts: re.Pattern[str]  # a character some phrase starts with


_tables: _Tables | None = None
_lock = threading.Lock()


def _read(name: str) -> dict[str, str]:
    """A table's lines ``key<TAB>value [value...]``, each key to its first value."""
    text = resources.files(_PACKAGE).joinpath(name).read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, _, values = line.partition("\t")
        first = values.split(" ")[0] if values else ""
        if key and first:
            out[key] = first
    return out


def _load() -> _Tables:
    phrases = _read(_PHRASES)
    chars = {ord(k): v for k, v in _read(_CHARACTERS).items() if len(k) == 1}
    by_start: dict[str, set[int]] = {}
    for key in phrases:
        by_start.setdefault(key[0], set()).add(len(key))
    lengths = {c: tuple(sorted(ls, reverse=True)) for c, ls in by_start.items()}
    # One character class: matched in one linear pass, no backtracking.
    starts = re.compile("[" + "".join(re.escape(c) for c in sorted(lengths)) + "]")
    return _Tables(chars, phrases, lengths, starts)


def tables() -> _Tables:
    """The tables, read on first use (a missing package raises ImportError/FileNotFoundError)."""
    global _tables
    if _tables is None:
        with _lock:
            if _tables is None:
                _tables = _load()
    return _tables


def to_simplified(text: str) -> str:
    """``text`` with Traditional Chinese written in Simplified characters; any other text
    (English, Simplified, emoji) unchanged, and the same length apart from a few phrases."""
    if text.isascii():
        return text
    t = tables()
    out: list[str] = []
    done = 0
    for m in t.starts.finditer(text):
        at = m.start()
        if at < done:
            continue
        for length in t.lengths[text[at]]:
            simplified = t.phrases.get(text[at : at + length])
            if simplified is not None:
                out.append(text[done:at].translate(t.chars))
                out.append(simplified)
                done = at + length
                break
    out.append(text[done:].translate(t.chars))
    return "".join(out)
