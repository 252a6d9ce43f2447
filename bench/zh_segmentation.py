"""Chinese word segmentation against the index's single characters, on the repo's Chinese sets.

Usage::

    .venv/bin/python bench/zh_segmentation.py   # needs `pip install rjieba` (not a dependency)

The index stores Chinese one character a token (:func:`memory.index.text.space_cjk`) and a
query's Chinese run becomes its character bigrams, each a phrase of adjacent characters
(:func:`memory.index.text.keyword_terms`). Issue 32 asked whether real segmentation (jieba,
through ``rjieba``, the maintained jieba-rs binding) does better. This bench runs
``bench/prompt_recall.py``'s Chinese set (both hand-written files under
``tests/agent/data/``, the whole agent with an in-process model) once per tokenization, each
on a fresh data dir, and prints the share of gold memories in the prompt and in a plain
search's top 5:

- ``chars``: the index and the queries as PCAI has them;
- ``words``: the index and the queries segmented by jieba (each word one FTS5 token);
- ``search``: the index by jieba's search mode (words and their sub-words), queries by words;
- ``query-words``: the character index kept, the query's bigrams replaced by jieba words;
- ``query-union``: the character index kept, the bigrams plus jieba words of 3+ characters.

It swaps the two functions where the index and the search call them, so everything else is
the real path. Questions whose share differs from ``chars`` are listed. Last line:
``zh segmentation: chars <p>/<s> words <p>/<s> ...`` (prompt/search).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import prompt_recall  # noqa: E402

import memory.index.chunks as chunks  # noqa: E402
import memory.search.hybrid as hybrid  # noqa: E402
from memory.index import text  # noqa: E402

VARIANTS = ("chars", "words", "search", "query-words", "query-union")
_RUN = re.compile(f"[{text.CJK_CLASS}]+")


def _jieba() -> Any:
    try:
        return importlib.import_module("rjieba")
    except ImportError:
        sys.exit("zh_segmentation: rjieba is not installed (pip install rjieba); nothing measured")


def _index_text(cut: Callable[[str], list[str]]) -> Callable[[str], str]:
    """``space_cjk`` with each Chinese run cut into words (one FTS5 token each)."""
    return lambda s: _RUN.sub(lambda m: " " + " ".join(cut(m.group(0))) + " ", s)


def _query_terms(
    cut: Callable[[str], list[str]], *, phrases: bool, union: bool
) -> Callable[..., list[str]]:
    """``keyword_terms`` with Chinese runs cut into words (kept as phrases of characters when
    the index is of characters), optionally besides the bigrams."""

    def terms(s: str, *, max_terms: int = 32) -> list[str]:
        words: list[str] = []
        for term in text.query_terms(s):
            if not text.has_cjk(term):
                words.append(term.lower())
                continue
            if union:
                pairs = [term[i : i + 2] for i in range(len(term) - 1)] or [term]
                words += [p for p in pairs if not all(ch in text._CJK_STOP for ch in p)]
            for w in cut(term):
                if all(ch in text._CJK_STOP for ch in w) or (union and len(w) < 3):
                    continue
                words.append(w)
        content = [w for w in words if w not in text._STOPWORDS]
        kept = list(dict.fromkeys(content or words))[:max_terms]
        if phrases:
            return [text.fts_phrase(t) for t in kept]
        return ['"' + t.replace('"', '""') + '"' for t in kept]

    return terms


@contextlib.contextmanager
def tokenization(name: str, jieba: Any) -> Iterator[None]:
    """Swap in ``name``'s index text and query terms for the duration."""
    saved = chunks.space_cjk, hybrid.keyword_terms
    if name == "words":
        chunks.space_cjk = _index_text(jieba.cut)
        hybrid.keyword_terms = _query_terms(jieba.cut, phrases=False, union=False)
    elif name == "search":
        chunks.space_cjk = _index_text(jieba.cut_for_search)
        hybrid.keyword_terms = _query_terms(jieba.cut, phrases=False, union=False)
    elif name in ("query-words", "query-union"):
        union = name == "query-union"
        hybrid.keyword_terms = _query_terms(jieba.cut, phrases=True, union=union)
    try:
        yield
    finally:
        chunks.space_cjk, hybrid.keyword_terms = saved


async def run(name: str, jieba: Any, embedder: Any) -> list[tuple[str, float, float]]:
    """(question, prompt share, search share) of every Chinese question under ``name``."""
    asked: list[tuple[str, float, float]] = []
    ask = prompt_recall.Chat.ask

    async def noted(self: Any, user: str, question: str, gold: Any) -> None:
        await ask(self, user, question, gold)
        asked.append((question, self.tally.prompt[-1], self.tally.search[-1]))

    prompt_recall.Chat.ask = noted  # type: ignore[method-assign]
    try:
        with tokenization(name, jieba), tempfile.TemporaryDirectory() as work:
            await prompt_recall.run_zh(embedder, Path(work))
    finally:
        prompt_recall.Chat.ask = ask  # type: ignore[method-assign]
    return asked


def main() -> None:
    jieba = _jieba()
    embedder = prompt_recall.build_embedder(prompt_recall.load_settings({}))
    results = {name: asyncio.run(run(name, jieba, embedder)) for name in VARIANTS}
    base = results["chars"]
    summary = []
    for name, rows in results.items():
        p = sum(r[1] for r in rows) / len(rows)
        s = sum(r[2] for r in rows) / len(rows)
        print(f"{name:12} {len(rows)} questions: prompt {p:.3f}, search alone {s:.3f}")
        for (q, bp, bs), (_, vp, vs) in zip(base, rows, strict=True):
            if (bp, bs) != (vp, vs):
                print(f"    {q}  prompt {bp:.2f}->{vp:.2f}  search {bs:.2f}->{vs:.2f}")
        summary.append(f"{name} {p:.3f}/{s:.3f}")
    print("zh segmentation (prompt/search): " + " ".join(summary))


if __name__ == "__main__":
    main()
