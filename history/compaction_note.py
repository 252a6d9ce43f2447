"""The compaction note: the one message standing for compacted history, and its budget.

The note holds the summary's gist and where the summary is written; in a prompt it costs at
most half of ``HistoryConfig.compaction_prompt_tokens`` (the other half is for the compaction
summaries memory search brings).
"""

from __future__ import annotations

from history.config import HistoryConfig
from memory.base.tokens import TokenCounter

# Chat formats spend a few tokens per message on the role and separators.
MESSAGE_OVERHEAD_TOKENS = 4
NOTE_PREFIX = "[先前討論已寫入記憶]"


def note_limit(config: HistoryConfig) -> int:
    """Tokens the compaction note may cost in a prompt (its message overhead included).

    Half of ``compaction_prompt_tokens``: the other half is left for the compaction summaries
    memory search brings when the talk turns back to what was compacted.
    """
    return max(0, config.compaction_prompt_tokens // 2)


def fit_tokens(text: str, counter: TokenCounter, max_tokens: int) -> str:
    """``text`` cut so that, sent as one chat message, it costs at most ``max_tokens``."""
    room = max_tokens - MESSAGE_OVERHEAD_TOKENS
    cut = counter.truncate(text, max(0, room))
    # Tokens of a cut piece can merge differently once joined: shrink until it holds.
    while cut and counter.count(cut) > room:
        cut = counter.truncate(cut, counter.count(cut) - 1)
    return cut


def note_text(
    gist: str, pointer: str, counter: TokenCounter, max_tokens: int, *, earlier: bool = False
) -> str:
    """The session's note: the summary's gist, cut to fit, and where the summary is written.

    The pointer (``MEMORY_FULL.md § 對話摘要 (day)`` and the daily log) is kept whole when it
    fits; the gist gets the room left, so the note never costs more than ``max_tokens``.
    """
    tail = f"（{pointer}{'，及更早的摘要' if earlier else ''}）"
    text = f"{NOTE_PREFIX} 摘要：{gist}{tail}"
    room = max_tokens - MESSAGE_OVERHEAD_TOKENS
    while counter.count(text) > room and gist:
        cut = counter.truncate(gist, max(0, counter.count(gist) - (counter.count(text) - room)))
        gist = "" if cut == gist else cut.rstrip()
        text = f"{NOTE_PREFIX} 摘要：{gist}…{tail}" if gist else f"{NOTE_PREFIX}{tail}"
    return fit_tokens(text, counter, max_tokens)
