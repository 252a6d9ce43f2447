"""Which section of MEMORY.md a memory goes under: keyword rules, zh + en, first match wins."""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory.base.markdown import DEFAULT_SECTION

# (section name, keywords separated by "|"). The first section with a keyword in the text wins.
SECTION_RULES: tuple[tuple[str, str], ...] = (
    ("規則 Rules", "一律|必須|必须|永遠|永远|always|never|must|rule"),
    (
        "偏好 Preferences",
        "喜歡|喜欢|偏好|討厭|讨厌|愛吃|爱吃|愛喝|不吃|不喝|最愛|prefer|prefers|favorite|favourite"
        "|i like|i love|i hate|i dislike",
    ),
    (
        "工作 Work",
        "工作|上班|專案|专案|項目|项目|公司|同事|老闆|主管|客戶|會議|開會|报告|報告|部署"
        "|project|work|job|meeting|client|deadline|colleague|deploy",
    ),
    (
        "個人 Personal",
        "生日|家人|太太|老婆|先生|老公|兒子|女兒|孩子|朋友|爸爸|媽媽|住在|寵物|我的狗|我的貓"
        "|birthday|wife|husband|son|daughter|family|friend|i live|my dog|my cat|pet",
    ),
)


def _keyword_pattern(words: str) -> re.Pattern[str]:
    # English words need word boundaries ("son" is not in "person"); Chinese has no spaces.
    parts = [rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in words.split("|")]
    return re.compile("|".join(parts), re.IGNORECASE)


_SECTION_PATTERNS = [(name, _keyword_pattern(words)) for name, words in SECTION_RULES]


def choose_section(text: str, existing: Iterable[str] = ()) -> str:
    """A section for ``text`` by keyword; an existing section of the same name is reused."""
    for name, pattern in _SECTION_PATTERNS:
        if pattern.search(text):
            for section in existing:
                if section.lower() == name.lower():
                    return section
            return name
    return DEFAULT_SECTION


# A section named in both languages: its Chinese half, a space, its English half.
_TWO_NAMES = re.compile(r"^([^\x00-\x7f][^\x00-\x7f ]*)\s+([\x00-\x7f]+)$")


def section_halves(section: str) -> tuple[str, str] | None:
    """The two halves of a section named in both languages ("個人 Personal": 個人, Personal),
    else None."""
    m = _TWO_NAMES.match(section)
    return (m.group(1), m.group(2)) if m else None


def known_section(typed: str, existing: Iterable[str]) -> str:
    """The section ``typed`` names: an existing one, else a rule's, written the same way (case
    aside) or as either half of a name in both languages ("Personal" and 個人 name "個人
    Personal", so no second section is made beside it); else ``typed`` as it is."""
    want = typed.casefold()
    for name in (*existing, *(rule for rule, _ in SECTION_RULES)):
        if want == name.casefold() or want in (h.casefold() for h in section_halves(name) or ()):
            return name
    return typed
