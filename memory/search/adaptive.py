"""Adaptive retrieval (docs/retrieval.md, "Adaptive retrieval"): should this message search?

Flow, first match wins::

    force pattern? -> retrieve        (記得 上次 之前 歷史 過去 remember previously ...,
                                       and decision questions: 選擇 比較 決定 which should I ...)
    slash command / HEARTBEAT? -> skip (system traffic, never a periodic search either)
    too short (< 5 chars)? -> skip
    every 5th turn? -> retrieve        (the periodic forced retrieval, a safety net)
    greeting / acknowledgement? -> skip  (hi, hello, 你好, ok, 好的, thanks ...)
    emoji only? -> skip
    short (CJK < 6 / other < 15 chars) without "?" or "？"? -> skip
    otherwise -> retrieve

The periodic search comes after the length check because a message under five characters
gives the search nothing to match; it comes before the greeting check so a chatty user still
gets memory into the context every few turns.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from memory.config import AdaptiveConfig
from memory.index.text import has_cjk

_FORCE_CJK = re.compile(
    r"記得|记得|記不記得|上次|之前|以前|歷史|历史|過去|过去|曾經|曾经|"
    r"選擇|选择|比較|比较|決定|决定|決策|决策|哪個|哪个|哪一|還是|还是|該不該|该不该|要不要"
)
_FORCE_EN = re.compile(
    r"\b(?:remember|recall|previously|earlier|last\s+time|history|in\s+the\s+past|"
    r"which|should\s+i|compare|comparison|versus|vs\.?|decide|decision|choose|choice|"
    r"better\s+option|pros\s+and\s+cons)\b",
    re.IGNORECASE,
)
_SYSTEM = re.compile(r"^\s*(?:/[A-Za-z0-9_]+(?:@\w+)?\b.*|heartbeat\b.*)$", re.IGNORECASE | re.S)
_GREET = (
    r"hi|hello|hey|yo|hiya|howdy|good\s+(?:morning|afternoon|evening|night)|"
    r"thanks?(?:\s+you)?|thx|ty|bye|goodbye|see\s+you|ok(?:ay)?|k|sure|yes|yeah|yep|no|nope|"
    r"got\s+it|cool|nice|great|alright|fine|"
    r"你好|您好|哈囉|哈啰|嗨|早安|午安|晚安|早上好|晚上好|謝謝|谢谢|多謝|多谢|感謝|感谢|再見|再见|"
    r"拜拜|好的|好啊|好|嗯+|恩|收到|了解|知道了|明白|沒問題|没问题|對|对|是的|可以"
)
_TAIL = r"there|again|a\s+lot|so\s+much|much|you|all|你|您|喔|哦|啦|呀|囉|啊|哈+"
# The whole message is greetings/acknowledgements, possibly repeated ("你好你好！", "ok ok").
_GREETING_ACK = re.compile(
    rf"^\W*(?:{_GREET})(?:[\s,，!！~.。]*(?:{_GREET}|{_TAIL}))*[\W_]*$", re.IGNORECASE
)
_QUESTION = ("?", "？")
# Only a short message can be all greetings or all emoji; the patterns and the character loop
# never see more (``^\W*(?:hi|...)`` backtracks through a 100 KB run of symbols per greeting).
_SHORT_MAX = 280


@dataclass(frozen=True, slots=True)
class RetrievalDecision:
    """Whether to search memory for a message, and the rule that decided it."""

    retrieve: bool
    reason: str


def _emoji_only(text: str) -> bool:
    """True when ``text`` has no letter, digit or CJK character (emoji, symbols, punctuation)."""
    for ch in text:
        if ch.isspace():
            continue
        cat = unicodedata.category(ch)
        if cat[0] in ("L", "N"):
            return False
    return True


def decide_retrieval(text: str, *, turn: int, config: AdaptiveConfig) -> RetrievalDecision:
    """Decide whether ``text`` (the ``turn``-th user message, from 1) should search memory."""
    stripped = text.strip()
    if _FORCE_CJK.search(stripped) or _FORCE_EN.search(stripped):
        return RetrievalDecision(True, "force_pattern")
    if _SYSTEM.match(stripped):
        return RetrievalDecision(False, "system_command")
    compact = "".join(stripped.split())
    if len(compact) < config.min_chars:
        return RetrievalDecision(False, "too_short")
    if config.force_every_turns > 0 and turn > 0 and turn % config.force_every_turns == 0:
        return RetrievalDecision(True, "periodic")
    short = len(stripped) <= _SHORT_MAX
    if short and _GREETING_ACK.match(stripped):
        return RetrievalDecision(False, "greeting_or_ack")
    if short and _emoji_only(stripped):
        return RetrievalDecision(False, "emoji_only")
    asks = any(q in stripped for q in _QUESTION)
    limit = config.min_cjk_chars if has_cjk(stripped) else config.min_other_chars
    if len(compact) < limit and not asks:
        return RetrievalDecision(False, "short_no_question")
    return RetrievalDecision(True, "default")
