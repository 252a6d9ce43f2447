"""Words that name a MEMORY.md section in a message, in Chinese and English (section gating)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from memory.base.sections import SECTION_RULES

# Words that name the usual sections, so "what's on my todo list" reaches 待辦.
DEFAULT_SECTION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "關於我": ("我是", "我的", "about me", "myself"),
    "重要決定": ("決定", "決策", "decision", "decided", "decide"),
    "待辦": ("待辦", "要做", "todo", "to-do", "task"),
    "教訓": ("教訓", "學到", "lesson", "learned"),
    "時間／近期": ("最近", "近期", "今天", "recent", "schedule"),
    "技術／記憶": ("技術", "程式", "記憶", "tech", "code", "memory"),
}
# A heading's parts: runs of CJK characters, and Latin words of three letters or more.
_PARTS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+|[A-Za-z][A-Za-z'-]{2,}")


def heading_parts(section: str) -> list[str]:
    """The halves of a heading: ``偏好 Preferences`` -> 偏好, Preferences; ``時間／近期`` -> 2."""
    parts = _PARTS.findall(section)
    return parts if len(parts) > 1 else []


def _rule_words() -> dict[str, tuple[str, ...]]:
    """The bot's own sections' keywords (``SECTION_RULES``) by heading and by either half."""
    out: dict[str, tuple[str, ...]] = {}
    for name, words in SECTION_RULES:
        for key in (name, *heading_parts(name)):
            out[key.casefold()] = tuple(words.split("|"))
    return out


_RULE_WORDS = _rule_words()


def section_words(section: str, keywords: Mapping[str, Iterable[str]] | None = None) -> list[str]:
    """Every word that names ``section`` in a message, in Chinese and English.

    The heading, each half of a bilingual heading (with an English plural's singular), the
    built-in keywords for the heading or either half, and ``keywords[section]``.
    """
    parts = heading_parts(section)
    words = [section, *parts]
    words += [p[:-1] for p in parts if p.isascii() and p.lower().endswith("s") and len(p) > 4]
    for key in (section, *parts):
        words += DEFAULT_SECTION_KEYWORDS.get(key, ())
        words += _RULE_WORDS.get(key.casefold(), ())
    words += (keywords or {}).get(section, ())
    return list(dict.fromkeys(words))


@functools.lru_cache(maxsize=1024)
def _whole_word(word: str) -> re.Pattern[str]:
    """``word`` not inside a longer ASCII word. The word comes first and its edges are checked
    after it, so the engine scans for the word itself (a lookbehind first tried every offset).
    """
    w = re.escape(word)
    return re.compile(rf"{w}(?<![a-z0-9]{w})(?![a-z0-9])")


def named(message: str, words: Iterable[str]) -> bool:
    """Whether ``message`` contains one of ``words`` (English ones as whole words)."""
    folded = message.casefold()
    for word in words:
        w = word.casefold().strip()
        if not w:
            continue
        if w.isascii():
            if _whole_word(w).search(folded):
                return True
        elif w in folded:
            return True
    return False
