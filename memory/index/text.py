"""Text helpers shared by indexing and search: CJK detection and safe FTS5 queries.

FTS5's unicode61 tokenizer sees a run of Han characters as one token, so the index stores CJK
text with a space between characters: every character is a token and a
query word becomes a phrase of adjacent characters, so a two-character query (咖啡) matches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate

CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
# A query term: a CJK run, or a run of letters/digits (anything else separates terms).
_TERM = re.compile(f"[{CJK_CLASS}]+|[^\\W_]+", re.UNICODE)


def has_cjk(text: str) -> bool:
    """True if ``text`` contains any CJK character."""
    return _CJK_CHAR.search(text) is not None


def count_cjk(text: str) -> int:
    """Number of CJK characters in ``text``."""
    return len(_CJK_CHAR.findall(text))


def space_cjk(text: str) -> str:
    """Put spaces around every CJK character so that each one is an FTS5 token."""
    return _CJK_RUN.sub(lambda m: " " + " ".join(m.group(0)) + " ", text)


def query_terms(text: str) -> list[str]:
    """Split ``text`` into search terms: CJK runs and alphanumeric words, in order."""
    return _TERM.findall(text)


def fts_phrase(term: str) -> str:
    """Quote one term as an FTS5 string; CJK runs become phrases of adjacent characters."""
    body = space_cjk(term).strip() if has_cjk(term) else term
    return '"' + body.replace('"', '""') + '"'


def fts_match_query(text: str, *, max_terms: int = 32) -> str:
    """Build an FTS5 MATCH expression that ORs the quoted terms of ``text``.

    Every term is a quoted string, so user text can never inject FTS5 syntax
    (``"``, ``*``, ``-``, ``NEAR``, ``AND``, column filters). Returns "" when no term is left.
    """
    seen: list[str] = []
    for term in query_terms(text):
        low = term.lower()
        if low not in seen:
            seen.append(low)
        if len(seen) >= max_terms:
            break
    return " OR ".join(fts_phrase(t) for t in seen)


# Function words that only add noise to an OR query (BM25 gives them little weight, but they
# drag thousands of rows into the candidate scan). Content words are never in this list.
_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves s t don doesn didn isn wasn aren weren ve ll re d m also ever much many""".split()  # noqa: SIM905
)
# CJK particles and pronouns: a bigram made only of these is not a keyword.
_CJK_STOP = frozenset("的了是我你他她它們们嗎吗呢吧啊呀麼么什在有和與与及就也都很還还這这那哪個个")


def keyword_terms(text: str, *, max_terms: int = 32) -> list[str]:
    """The quoted FTS5 terms of a natural-language query: keywords, stopwords removed.

    English/other words are kept unless they are stopwords (if only stopwords remain, all are
    kept). A CJK run becomes its overlapping character bigrams (each a two-character phrase,
    so "咖啡" matches and a whole Chinese sentence still matches its parts); a lone CJK
    character stays as itself. Every term is quoted: user text cannot inject FTS5 syntax.

    A text with more than ``max_terms`` keeps its last ones: a query of several lines (a
    pasted dialogue, the recent lines a turn joins) ends with what it is about now, and a
    Chinese line spends the budget fast (a bigram a character). Keeping the first ones
    searched a dialogue by its opening lines: MADial-Bench search alone, R@5 0.359 -> 0.492
    in Traditional Chinese, 0.562 -> 0.596 in English (bench/RESULTS.md).
    """
    words: list[str] = []
    for term in query_terms(text):
        if has_cjk(term):
            if len(term) == 1:
                words.append(term)
                continue
            for i in range(len(term) - 1):
                pair = term[i : i + 2]
                if not (pair[0] in _CJK_STOP and pair[1] in _CJK_STOP):
                    words.append(pair)
        else:
            words.append(term.lower())
    content = [w for w in words if w not in _STOPWORDS]
    newest = list(dict.fromkeys(reversed(content or words)))[:max_terms]
    return [fts_phrase(t) for t in reversed(newest)]


def keyword_query(text: str, *, max_terms: int = 32) -> str:
    """FTS5 MATCH for a natural-language query: the OR of :func:`keyword_terms`."""
    return " OR ".join(keyword_terms(text, max_terms=max_terms))


def selective_terms(
    terms: Sequence[str],
    doc_counts: Sequence[int],
    rows: int,
    max_df_ratio: float,
    limit: int,
    min_rows: int = 5000,
    max_rows: int = 0,
) -> list[str]:
    """Keep the query terms worth a BM25 lookup: the rare ones, at most ``limit``, rarest first.

    A term found in more than ``max_df_ratio`` (0.1) of the ``rows`` indexed rows, and in more
    than ``min_rows`` (5,000) rows, is dropped: FTS5's BM25 weighs a term by
    ``idf = log((N - n + 0.5) / (n + 0.5))``, so at n/N = 0.1 it counts ~2.2 against ~7-11 for
    a rare term, while scoring it means visiting a tenth of the table (the cost of the whole
    query). Below ``min_rows`` a term is cheap (~2 ms) whatever its share, so an index of a
    few thousand chunks keeps every term: there a common word can still point at the right
    speaker or day. If every term is dropped, the rarest one is kept so BM25 still
    speaks. Terms found nowhere are dropped (they cannot match). ``max_df_ratio`` <= 0 turns
    the df rule off; ``limit`` <= 0 keeps any number of terms. ``max_rows`` caps what BM25
    reads in all: the rarest terms are kept while the rows they match add up to at most that
    many (the rarest one always), since FTS5 scores every matching row before it sorts (0: no
    cap). The kept terms stay in query order.
    """
    ranked = sorted((df, i) for i, df in enumerate(doc_counts) if df > 0 and i < len(terms))
    kept = ranked
    if max_df_ratio > 0:
        cheap = [(df, i) for df, i in ranked if df <= max_df_ratio * rows or df <= min_rows]
        kept = cheap or ranked[:1]
    if limit > 0:
        kept = kept[:limit]
    if max_rows > 0:
        within = list(accumulate(df for df, _ in kept))
        kept = kept[: max(1, sum(1 for total in within if total <= max_rows))]
    return [terms[i] for _, i in sorted(kept, key=lambda x: x[1])]
