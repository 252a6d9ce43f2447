"""The user's emphasis when asking to remember: "這很重要" / "this is important" -> a weight.

PCAI ranks and keeps memories by ``user_weight`` (0-10, default 5) and makes a weight of
9 or more core (always in the prompt). A user fills it from chat with their own words:
"記住，這很重要：…" / "remember, this is important: …" proposes weight 8 (ranked higher and kept
longer), "非常重要" / "very important" / "never forget" proposes 9 (core). The weight is shown
on the proposal, and nothing is written until the user confirms it.

"重要" alone is not emphasis ("重要的會議在週五" is a fact about a meeting): the word counts
only as a remark of its own, followed by punctuation or the end of the text, or after "這
(個/件事)" / "this is" / "it's".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.base.edges import end_before, strip_edges

IMPORTANT = 8
CORE = 9
# The model may raise a weight it proposes, never make a memory core: 9+ is the user's words
# (or /pin), shown on the proposal they confirm.
MODEL_MAX_WEIGHT = 8

_STRONG_ZH = "非常|超級|超级|超|極|极|十分|特別|特别|最|極度|极度"
_STRONG_EN = "very|really|super|extremely|critically|incredibly|so"
_END = r"(?=[\s!！,，:：;；。.…~～]|$)"
_END_EN = r"(?=[!,:;.…]|$)"  # "important that ..." is a statement, "important:" a remark
_PUNCT_AFTER = r"[\s!！,，:：;；。.…~～]*"
_ZH = re.compile(
    rf"(?:這|这|這個|这个|這件事|这件事|此事|它)?(?:真的|也)?(?P<strong>{_STRONG_ZH})?(?:很)?"
    rf"重要{_END}{_PUNCT_AFTER}"
    r"|(?P<never>千萬|千万|一定)(?:要記得|要记得|別忘|别忘|不要忘記|不要忘记|要記住|要记住)"
    rf"{_PUNCT_AFTER}"
)
_EN = re.compile(
    rf"\b(?:(?:this|that|it)(?:\s+is|'s)\s+)?(?:(?P<strong>{_STRONG_EN})\s+)?important"
    rf"{_END_EN}{_PUNCT_AFTER}"
    rf"|\b(?P<never>never\s+forget(?:\s+(?:this|that))?|crucial|critical){_END_EN}"
    rf"{_PUNCT_AFTER}",
    re.IGNORECASE,
)
_LEAD_EDGE = ",，:：;；.。!！、-–—"
_TRAIL_EDGE = ",，:：;；、-–—"  # a sentence's own full stop stays


@dataclass(frozen=True, slots=True)
class Emphasis:
    """The weight the user's words ask for (None: they asked for none) and the text without
    the remark."""

    weight: int | None
    text: str


def _weight(match: re.Match[str]) -> int:
    return CORE if match.group("strong") or match.group("never") else IMPORTANT


def _is_remark(text: str, match: re.Match[str], pattern: re.Pattern[str]) -> bool:
    """Whether the match is a remark of its own, not a word inside a fact."""
    if pattern is _EN and not re.match(r"(?i)(this|that|it)\b", match.group(0)):
        # "important" alone: a remark only at the start of a clause ("Important: ...").
        end = end_before(text, match.start())  # not text[:start].rstrip(): once per match
        return (
            not end
            or text[end - 1] in ",，:：;；.。!！"
            or text[max(0, end - 8) : end].lower().endswith(("remember", "note"))
        )
    return True


def emphasis(text: str) -> Emphasis:
    """The strongest emphasis in ``text`` and the text with every emphasis remark removed."""
    weight: int | None = None
    out = text
    for pattern in (_ZH, _EN):
        kept: list[str] = []
        last = 0
        for match in pattern.finditer(out):
            if not match.group(0).strip() or not _is_remark(out, match, pattern):
                continue
            weight = max(weight or 0, _weight(match))
            kept.append(out[last : match.start()])
            last = match.end()
        if kept:
            out = "".join(kept) + out[last:]
    cleaned = strip_edges(" ".join(out.split()), _LEAD_EDGE, _TRAIL_EDGE)
    return Emphasis(weight, cleaned if weight is not None else text)


def model_weight(value: object) -> int | None:
    """A weight the model proposed, as an int in 1..MODEL_MAX_WEIGHT (None when unusable)."""
    try:
        weight = int(str(value).strip())
    except ValueError:
        return None
    return max(1, min(MODEL_MAX_WEIGHT, weight))
