"""The section-proportion index (seed 000): which MEMORY.md sections a turn may query.

Each turn records the sections it hit in ``users/<key>/index_state.json`` (the seed's schema),
keeps the last ``window_size`` (5) turns, and recomputes every section's proportion by the
seed's "section occurrence" definition. A section at or above ``dominant_threshold`` (0.7)
dominates: the next turn queries only it plus the sections the message names. Sections
missed ``miss_suggest_after`` (3) turns in a row are suggested for pruning, and a section that
stays dominant for ``topic_stable_turns`` (2) turns is written to ``MEMORY_TOPIC.md``.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from history.config import TopicIndexConfig
from memory.fsutil import atomic_write_text
from memory.guards import mask
from memory.locks import user_lock
from memory.users import UserPaths

log = logging.getLogger(__name__)

# Words that name the seed's example sections, so "what's on my todo list" reaches 待辦.
DEFAULT_SECTION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "關於我": ("我是", "我的", "about me", "myself"),
    "重要決定": ("決定", "決策", "decision", "decided", "decide"),
    "待辦": ("待辦", "要做", "todo", "to-do", "task"),
    "教訓": ("教訓", "學到", "lesson", "learned"),
    "時間／近期": ("最近", "近期", "今天", "recent", "schedule"),
    "技術／記憶": ("技術", "程式", "記憶", "tech", "code", "memory"),
}


@dataclass(frozen=True, slots=True)
class TopicTurn:
    """One turn: its id, time and the sections it hit."""

    turn_id: int
    ts: str
    sections_hit: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopicState:
    """``index_state.json``, field for field as seed 000 §3 defines it."""

    window_size: int = 5
    dominant_threshold: float = 0.7
    turns: tuple[TopicTurn, ...] = ()
    proportions: Mapping[str, float] = field(default_factory=dict)
    current_topic: str = ""
    topic_summary: str = ""
    last_updated: str = ""
    miss_count: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The seed's JSON layout."""
        return {
            "window_size": self.window_size,
            "dominant_threshold": self.dominant_threshold,
            "turns": [
                {"turn_id": t.turn_id, "ts": t.ts, "sections_hit": list(t.sections_hit)}
                for t in self.turns
            ],
            "proportions": dict(self.proportions),
            "current_topic": self.current_topic,
            "topic_summary": self.topic_summary,
            "last_updated": self.last_updated,
            "miss_count": dict(self.miss_count),
        }

    @classmethod
    def from_json(cls, data: Any) -> TopicState:
        """Read the JSON layout; raises on a malformed file."""
        if not isinstance(data, dict):
            raise ValueError("index_state.json must hold an object")
        turns = tuple(
            TopicTurn(int(t["turn_id"]), str(t.get("ts", "")), tuple(map(str, t["sections_hit"])))
            for t in data.get("turns", [])
        )
        return cls(
            window_size=int(data.get("window_size", 5)),
            dominant_threshold=float(data.get("dominant_threshold", 0.7)),
            turns=turns,
            proportions={str(k): float(v) for k, v in dict(data.get("proportions", {})).items()},
            current_topic=str(data.get("current_topic", "")),
            topic_summary=str(data.get("topic_summary", "")),
            last_updated=str(data.get("last_updated", "")),
            miss_count={str(k): int(v) for k, v in dict(data.get("miss_count", {})).items()},
        )


def iso_z(when: datetime) -> str:
    """``2026-02-08T12:00:00Z``, the seed's time format."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def compute_proportions(turns: Iterable[TopicTurn]) -> dict[str, float]:
    """Seed 000 §4.2.3: proportion = section occurrences / all occurrences in the window.

    Rounded to three places (5 hits of 重要決定 and 1 of 待辦 give 0.833 and 0.167).
    """
    counts: Counter[str] = Counter(s for t in turns for s in t.sections_hit)
    total = sum(counts.values())
    if not total:
        return {}
    return {s: round(n / total, 3) for s, n in sorted(counts.items(), key=lambda kv: -kv[1])}


def dominant_section(proportions: Mapping[str, float], threshold: float) -> str | None:
    """The section whose proportion is at least ``threshold`` (the largest, if several)."""
    best = sorted(proportions.items(), key=lambda kv: (-kv[1], kv[0]))
    return best[0][0] if best and best[0][1] >= threshold else None


def update_miss_counts(
    miss_count: Mapping[str, int], hit: Iterable[str], known: Iterable[str] = ()
) -> dict[str, int]:
    """Seed 000 §4.2.4: a hit section resets to 0, every other known section counts one more."""
    hit_set = set(hit)
    sections = set(miss_count) | set(known) | hit_set
    return {s: 0 if s in hit_set else miss_count.get(s, 0) + 1 for s in sorted(sections)}


def prune_suggestions(miss_count: Mapping[str, int], after: int) -> list[str]:
    """Sections missed ``after`` (3) or more turns in a row: candidates to merge or drop."""
    return sorted(s for s, n in miss_count.items() if n >= after)


def record_turn(
    state: TopicState, sections_hit: Iterable[str], now: datetime, known: Iterable[str] = ()
) -> TopicState:
    """Seed 000 §4.2: add the turn, trim to the window, recompute proportions and misses."""
    hit = tuple(dict.fromkeys(s for s in sections_hit if s))
    next_id = (state.turns[-1].turn_id + 1) if state.turns else 1
    turns = (*state.turns, TopicTurn(next_id, iso_z(now), hit))[-max(1, state.window_size) :]
    return replace(
        state,
        turns=turns,
        proportions=compute_proportions(turns),
        miss_count=update_miss_counts(state.miss_count, hit, known),
        last_updated=iso_z(now),
    )


def stable_dominant(state: TopicState, stable_turns: int) -> str | None:
    """The section that dominated each of the last ``stable_turns`` windows, if one did.

    The earlier windows are rebuilt from the turns kept, so they may be a turn shorter than
    the window size (the state keeps no more than the window).
    """
    if len(state.turns) < stable_turns:
        return None
    found: set[str | None] = set()
    for k in range(stable_turns):
        window = state.turns[: len(state.turns) - k]
        found.add(dominant_section(compute_proportions(window), state.dominant_threshold))
    only = found.pop() if len(found) == 1 else None
    return only


def _named(message: str, words: Iterable[str]) -> bool:
    folded = message.casefold()
    for word in words:
        w = word.casefold().strip()
        if not w:
            continue
        if w.isascii():
            if re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", folded):
                return True
        elif w in folded:
            return True
    return False


def sections_to_query(
    state: TopicState | None,
    message: str,
    known_sections: Sequence[str],
    keywords: Mapping[str, Iterable[str]] | None = None,
) -> list[str] | None:
    """Seed 000 §4.1: which sections this turn may query; None means all of them.

    With a dominant section: the dominant one plus every section whose name or keywords the
    message names. Without one (or without any state): None.
    """
    if state is None:
        return None
    top = dominant_section(state.proportions, state.dominant_threshold)
    if top is None:
        return None
    words = {**DEFAULT_SECTION_KEYWORDS, **(keywords or {})}
    allowed = [top]
    for section in known_sections:
        if section != top and _named(message, [section, *words.get(section, ())]):
            allowed.append(section)
    return allowed


@dataclass(frozen=True, slots=True)
class TurnUpdate:
    """What recording one turn changed."""

    state: TopicState
    dominant: str | None
    prune: tuple[str, ...]
    topic_written: bool


class TopicIndex:
    """Keeps each user's ``index_state.json`` and ``MEMORY_TOPIC.md``."""

    def __init__(self, data_dir: Path, config: TopicIndexConfig) -> None:
        self.data_dir = data_dir
        self.config = config

    def _paths(self, user_key: str) -> UserPaths:
        return UserPaths.of(self.data_dir, user_key)

    def fresh(self) -> TopicState:
        """An empty state with the configured window and threshold."""
        return TopicState(self.config.window_size, self.config.dominant_threshold)

    def load(self, user_key: str) -> TopicState | None:
        """The user's state; None when there is none yet (or it was unreadable)."""
        path = self._paths(user_key).index_state
        try:
            state = TopicState.from_json(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError) as exc:
            aside = path.with_name(f"{path.name}.corrupt-{datetime.now(UTC):%Y%m%dT%H%M%S}")
            log.warning("index_state of %s unreadable (%s); kept as %s", user_key, exc, aside)
            path.replace(aside)
            return None
        # The settings win over values left in the file by an earlier configuration.
        return replace(
            state,
            window_size=self.config.window_size,
            dominant_threshold=self.config.dominant_threshold,
        )

    def save(self, user_key: str, state: TopicState) -> None:
        """Write the state atomically."""
        text = json.dumps(state.to_json(), ensure_ascii=False, indent=2)
        atomic_write_text(self._paths(user_key).index_state, text + "\n")

    def record(
        self,
        user_key: str,
        sections_hit: Iterable[str],
        now: datetime,
        known_sections: Iterable[str] = (),
        summary: str = "",
    ) -> TurnUpdate:
        """Record one turn's hits (seed 000 §4.2) and return the new state and its advice.

        Section names and the summary are masked like every user-derived text, so the state
        and MEMORY_TOPIC.md never hold a secret (PCAI writes sections masked, so they match).
        """
        sections_hit = [mask(s) for s in sections_hit]
        known_sections = [mask(s) for s in known_sections]
        summary = mask(summary)
        with user_lock(self.data_dir, user_key):
            state = record_turn(
                self.load(user_key) or self.fresh(), sections_hit, now, known_sections
            )
            prune = tuple(prune_suggestions(state.miss_count, self.config.miss_suggest_after))
            stable = stable_dominant(state, self.config.topic_stable_turns)
            written = False
            if stable and (
                stable != state.current_topic or (summary and summary != state.topic_summary)
            ):
                state = replace(
                    state, current_topic=stable, topic_summary=summary or state.topic_summary
                )
                self._write_topic(user_key, state)
                written = True
            self.save(user_key, state)
        if prune:  # section names are the user's words: below INFO
            log.debug(
                "%s: sections missed %d+ turns, consider pruning: %s",
                user_key,
                self.config.miss_suggest_after,
                ", ".join(prune),
            )
        dominant = dominant_section(state.proportions, state.dominant_threshold)
        return TurnUpdate(state, dominant, prune, written)

    def sections_to_query(
        self,
        user_key: str,
        message: str,
        known_sections: Sequence[str],
        keywords: Mapping[str, Iterable[str]] | None = None,
    ) -> list[str] | None:
        """Which sections this turn may query for ``user_key`` (None: all of them)."""
        return sections_to_query(self.load(user_key), message, known_sections, keywords)

    def _write_topic(self, user_key: str, state: TopicState) -> None:
        share = state.proportions.get(state.current_topic, 0.0)
        lines = [
            "# MEMORY_TOPIC — 當前主題 (current topic)",
            "",
            f"- 主題：{mask(state.current_topic)}",
            f"- 比例：{share:.0%}（最近 {len(state.turns)} 輪）",
        ]
        if state.topic_summary:
            lines.append(f"- 摘要：{mask(state.topic_summary)}")
        lines.append(f"- 更新：{state.last_updated}")
        atomic_write_text(self._paths(user_key).memory_topic_md, "\n".join(lines) + "\n")
