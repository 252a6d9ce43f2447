"""Configuration values of the history package, with the defaults that ship."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HistoryConfig:
    """The short-term window, compaction and idle summaries (docs/conversations.md)."""

    max_history: int = 15
    full_text_count: int = 5
    summary_max_chars: int = 280
    summarize_min_sentences: int = 6
    summarize_min_lines: int = 10
    auto_write_threshold_tokens: int = 10000
    auto_write_threshold_turns: int = 15
    history_turns_after: int = 5
    idle_summary_minutes: int = 60
    idle_keywords_min: int = 3
    idle_keywords_max: int = 5


@dataclass(frozen=True, slots=True)
class TopicIndexConfig:
    """The section-proportion window (docs/retrieval.md, "Section gating")."""

    window_size: int = 5
    dominant_threshold: float = 0.7
    miss_suggest_after: int = 3
    topic_stable_turns: int = 2
