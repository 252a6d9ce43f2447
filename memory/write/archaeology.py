"""Find a memory's history by meaning (``/history 咖啡``), not only by its exact topic or id.

A query is matched three ways, strongest first:

1. an entry id, or a ``canonical_topic`` written the same way (case, ``_``/``:`` and spaces
   aside): those chains, and nothing else;
2. hybrid search (the same pipeline as every search) over the user's entries of every status,
   so an old version's words find its chain too: a chain scores its best hit, and is listed
   only when one of its versions mentions the query's most telling term (its word or Chinese
   character that the fewest of the person's memories hold: "tea I drink" -> tea, 我的茶 -> 茶),
   since the search also finds what only shares a common word or a meaning;
3. the topics' names by meaning and words (``drink_preference`` reads "drink preference"): a
   topic whose name is in the query scores 1, else its calibrated similarity to the query if
   that reaches ``TOPIC_MIN``; every chain of the topic gets it.

The best chains are kept: those within ``KEEP_RATIO`` of the best score, at most
``MAX_CHAINS``, each oldest version first (the supersedes timeline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory.base.markdown import STATUSES, Entry
from memory.index.passages import PassageCache
from memory.index.sources import KIND_MEMORY
from memory.search.scoring import calibrate
from memory.store.service import MemoryService
from memory.write.governance import chain_of

# e5, calibrated: a topic named by the query's meaning scores 0.5-0.65 ("coffee" -> "drink
# preference" 0.50, 生日 -> "wife birthday" 0.56); unrelated names stay under 0.42.
TOPIC_MIN = 0.45
KEEP_RATIO = 0.75
MAX_CHAINS = 3
SEARCH_K = 10
_SEP = re.compile(r"[\s_:/.\-]+")
_LATIN = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


@dataclass(frozen=True, slots=True)
class ChainMatch:
    """One chain of versions that matches a query, oldest first, and how well."""

    chain: tuple[Entry, ...]
    score: float
    via: str  # "id", "topic", "search" or "meaning"

    @property
    def topic(self) -> str:
        """The chain's canonical topic (its newest version's), "" when it has none."""
        return next((e.canonical_topic for e in reversed(self.chain) if e.canonical_topic), "")


def topic_words(topic: str) -> str:
    """A topic as words: ``drink_preference`` -> "drink preference"."""
    return _SEP.sub(" ", topic).strip().casefold()


def chain_tuple(entries: Sequence[Entry], entry_id: str) -> tuple[Entry, ...]:
    """The versions linked to ``entry_id`` (:func:`~memory.write.governance.chain_of`), oldest."""
    return tuple(chain_of(entries, entry_id))


def find_history(
    memory: MemoryService, cache: PassageCache, user_key: str, query: str
) -> list[ChainMatch]:
    """The chains ``query`` is about, best first (see the module docstring)."""
    key = query.strip()
    entries = memory.entries(user_key)
    if not key or not entries:
        return []
    if any(e.id == key for e in entries):
        return [ChainMatch(chain_tuple(entries, key), 1.0, "id")]
    words = topic_words(key)
    exact = [e for e in entries if e.canonical_topic and topic_words(e.canonical_topic) == words]
    if exact:
        found = _chains(entries, exact)
        return _best(dict.fromkeys(found, 1.0), dict.fromkeys(found, "topic"), len(found))
    scores: dict[tuple[Entry, ...], float] = {}
    vias: dict[tuple[Entry, ...], str] = {}

    def credit(chain: tuple[Entry, ...], score: float, via: str) -> None:
        if score > scores.get(chain, 0.0):
            scores[chain], vias[chain] = score, via

    searcher = memory.searcher
    qvec = searcher.embedder.embed_query(key)
    by_id = {e.id: e for e in entries}
    telling = telling_terms(key, [e.text for e in entries])
    for hit in memory.search(user_key, key, SEARCH_K, qvec=qvec, statuses=STATUSES):
        if hit.chunk.kind == KIND_MEMORY and hit.chunk.unit_id in by_id:
            chain = chain_tuple(entries, hit.chunk.unit_id)
            # A text search lists what mentions the words (a topic may still match by meaning).
            if any(mentions(e.text, telling) for e in chain):
                credit(chain, hit.score, "search")
    topics = sorted({e.canonical_topic for e in entries if e.canonical_topic})
    if topics:
        vectors = cache.vectors([topic_words(t) for t in topics])
        for topic, vec in zip(topics, vectors, strict=True):
            named = _names(topic, words)
            sim = 1.0 if named else calibrate(float(np.dot(qvec, vec)), searcher.floor)
            if sim < TOPIC_MIN:
                continue
            members = [e for e in entries if e.canonical_topic == topic]
            for chain in _chains(entries, members):
                credit(chain, sim, "topic" if named else "meaning")
    return _best(scores, vias)


def query_terms(query: str) -> tuple[str, ...]:
    """The query's terms: its words of 3+ letters (every word when none is that long), and
    each Chinese character (no spaces mark Chinese words, and a pair may span two)."""
    words = _LATIN.findall(query.casefold())
    long = [w for w in words if len(w) >= 3]
    chars = [c for run in _CJK.findall(query) for c in run]
    return tuple(dict.fromkeys([*(long or words), *chars]))


def telling_terms(query: str, texts: Sequence[str]) -> tuple[str, ...]:
    """The query's terms that the fewest of ``texts`` hold (a term none holds aside): the ones
    that tell its memories from the rest ("drink tea": tea; 我的茶: 茶)."""
    held = {t: sum(1 for text in texts if _holds(text, t)) for t in query_terms(query)}
    counts = [n for n in held.values() if n]
    return tuple(t for t, n in held.items() if counts and n == min(counts))


def mentions(text: str, terms: Sequence[str]) -> bool:
    """Whether ``text`` holds one of ``terms`` (a whole word, or a Chinese character)."""
    return any(_holds(text, t) for t in terms)


def _holds(text: str, term: str) -> bool:
    if _CJK.fullmatch(term):
        return term in text
    return term in _LATIN.findall(text.casefold())


def _names(topic: str, query_words: str) -> bool:
    """Whether the query names the topic: the whole name, or one of its words (3+ letters)."""
    name = topic_words(topic)
    if name in query_words:
        return True
    query = set(query_words.split())
    return any(len(w) >= 3 and w in query for w in name.split())


def _chains(entries: Sequence[Entry], members: Sequence[Entry]) -> list[tuple[Entry, ...]]:
    """The distinct chains holding ``members``."""
    return list(dict.fromkeys(chain_tuple(entries, e.id) for e in members))


def _best(
    scores: dict[tuple[Entry, ...], float],
    vias: dict[tuple[Entry, ...], str],
    limit: int = MAX_CHAINS,
) -> list[ChainMatch]:
    """The chains within ``KEEP_RATIO`` of the best, best first (then the oldest)."""
    if not scores:
        return []
    top = max(scores.values())
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0][0].created_at, kv[0][0].id))
    return [
        ChainMatch(chain, score, vias[chain])
        for chain, score in ranked[:limit]
        if score >= top * KEEP_RATIO
    ]
