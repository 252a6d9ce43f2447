"""Folding: one result per thing said, and a confirmed memory before the lines that repeat it.

A user who asks "do I have a cat?" three times has three log records with the same words, and
a memory they confirmed ("我養了一隻貓，叫小橘") is usually also a log record of the message
that proposed it. Listing each copy wastes the few places of a result list (and of the
prompt's memory block) on one thing, and a fresh log record's recency boost put the copy above
the memory itself (``pcai search -k 2 貓`` returned two log lines). So, best score first:

- a log record or summary that merely repeats a memory's words (character-bigram overlap of
  at least :data:`REPEAT_OVERLAP`) is folded into that memory, which takes the better of the
  two scores: the memory the user confirmed stands where its copy would have;
- any other hit with the same words as a better one (case, spaces and punctuation aside) is
  folded into it.

Memories that fell below a threshold are passed too, as targets only: a copy that passed
brings its memory back at its own score.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from memory.index.chunks import Chunk
from memory.index.sources import KIND_MEMORY
from memory.search.noise import own_words

# Share of character bigrams two texts have in common (Jaccard) for one to repeat the other.
REPEAT_OVERLAP = 0.75
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Item:
    """One hit as folding sees it: its own words, whether it is a memory, its score."""

    words: str
    memory: bool
    score: float
    target_only: bool = False  # a memory below a threshold: it may only absorb a copy


@dataclass(frozen=True, slots=True)
class Folded:
    """The items kept (best score first, with their scores) and what each folded item went
    into."""

    kept: list[tuple[int, float]]
    into: dict[int, int]


def fold_key(text: str) -> str:
    """The words of ``text`` without case, spaces and punctuation."""
    return _NOT_WORD.sub("", text.lower())


def _bigrams(key: str) -> frozenset[str]:
    return frozenset(key[i : i + 2] for i in range(len(key) - 1)) if len(key) > 1 else frozenset()


def repeats(a: str, b: str, overlap: float = REPEAT_OVERLAP) -> bool:
    """Whether the fold keys ``a`` and ``b`` say the same thing (equal, or bigrams overlap)."""
    if not a or not b:
        return False
    if a == b:
        return True
    x, y = _bigrams(a), _bigrams(b)
    return bool(x and y) and len(x & y) / len(x | y) >= overlap


def fold(
    items: Sequence[Item], overlap: float = REPEAT_OVERLAP, limit: int | None = None
) -> Folded:
    """Fold the copies among ``items`` (rules above).

    With ``limit``, the visit stops once that many are kept: the items after them are kept as
    they are, unexamined (a search lists its top k; a text key for each candidate cost more
    than the rest of the stage).
    """
    keys: dict[int, str] = {}
    grams: dict[int, frozenset[str]] = {}

    def key(i: int) -> str:
        if i not in keys:
            keys[i] = fold_key(items[i].words)
        return keys[i]

    def same(i: int, m: int) -> bool:
        """:func:`repeats` of items ``i`` and ``m``, each one's bigrams made once: a turn
        compares every log line with every memory found (dozens each)."""
        a, b = key(i), key(m)
        if not a or not b or a == b:
            return bool(a) and a == b
        for j, k in ((i, a), (m, b)):
            if j not in grams:
                grams[j] = _bigrams(k)
        x, y = grams[i], grams[m]
        small, large = sorted((len(x), len(y)))
        if not small or small < overlap * large:  # the overlap cannot reach it
            return False
        return len(x & y) / len(x | y) >= overlap

    memories = [i for i, it in enumerate(items) if it.memory]
    score = {i: it.score for i, it in enumerate(items)}
    into: dict[int, int] = {}
    seen: dict[str, int] = {}  # fold key -> the kept item that has it
    revived: set[int] = set()
    kept_so_far: set[int] = set()
    for i in sorted(range(len(items)), key=lambda j: -items[j].score):
        it = items[i]
        if it.target_only:
            continue
        if limit is not None and len(kept_so_far) >= limit:
            break
        target = None
        if not it.memory:
            target = next((m for m in memories if same(i, m)), None)
        if target is None:
            target = seen.get(key(i)) if key(i) else None
        if target is None or target == i:  # a memory that took a copy in is seen already
            seen.setdefault(key(i), i)
            kept_so_far.add(i)
            continue
        into[i] = target
        score[target] = max(score[target], score[i])
        if items[target].target_only:
            revived.add(target)
        seen.setdefault(key(target), target)
        kept_so_far.add(target)
    kept = [
        i for i, it in enumerate(items) if i not in into and (not it.target_only or i in revived)
    ]
    kept.sort(key=lambda i: -score[i])
    return Folded([(i, score[i]) for i in kept], into)


class Scored(Protocol):
    """A search candidate: its chunk, its score and each stage's score."""

    chunk: Chunk
    score: float
    stages: dict[str, float]


C = TypeVar("C", bound=Scored)


def fold_candidates(
    live: list[C],
    below: list[C],
    dropped: list[Any],
    drop: Callable[[C, str, str], Any],
    limit: int | None = None,
) -> list[C]:
    """Fold ``live`` (``below``: memories under a threshold, targets only); returns the kept
    ones best first, each scored as it stands, and adds a ``drop`` of each folded one to
    ``dropped`` (a memory brought back leaves it)."""
    every = live + below
    items = [
        Item(own_words(c.chunk.text, c.chunk.kind), c.chunk.kind == KIND_MEMORY, c.score)
        for c in live
    ]
    items += [Item(c.chunk.text, True, c.score, target_only=True) for c in below]
    result = fold(items, limit=limit)
    back = {every[i].chunk.id for i, _ in result.kept if i >= len(live)}
    if back:  # brought back by a copy that passed: no longer among the drops
        dropped[:] = [d for d in dropped if d.chunk.id not in back]
    for i, target in result.into.items():
        dropped.append(drop(every[i], "fold", f"repeats chunk {every[target].chunk.id}"))
    kept = []
    for i, score in result.kept:
        every[i].score = every[i].stages["fold"] = score
        kept.append(every[i])
    return kept
