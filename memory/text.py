"""Text helpers shared by indexing and search: CJK detection and safe FTS5 queries.

FTS5's unicode61 tokenizer sees a run of Han characters as one token, so the index stores CJK
text with a space between characters (the seed's approach): every character is a token and a
query word becomes a phrase of adjacent characters, so a two-character query (咖啡) matches.
"""

from __future__ import annotations

import re

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
