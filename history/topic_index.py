"""The section-proportion index: which MEMORY.md sections a turn may query.

Each turn records the sections it hit in ``users/<key>/index_state.json`` (its schema and the
rules are in docs/retrieval.md, "Section gating"), keeps the last ``window_size`` (5) turns,
and recomputes every section's proportion. A section at or above ``dominant_threshold`` (0.7)
dominates: the next turn queries only it plus the sections the message is about — those it
names (the whole heading, either half of a bilingual one like ``偏好 Preferences``, or a
keyword of the section in Chinese or English: :func:`section_words`) and those the caller
found close in meaning (``about``, from the embedder). Sections missed ``miss_suggest_after``
(3) turns in a row are suggested for pruning, and a section that stays dominant for
``topic_stable_turns`` (2) turns is written to ``MEMORY_TOPIC.md``; :meth:`TopicIndex.overview`
hands both to ``/stats`` and the memory page.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from history.config import TopicIndexConfig
from history.section_words import named, section_words
from memory.base.fsutil import atomic_write_text
from memory.base.guards import mask
from memory.base.locks import user_lock
from memory.base.users import UserPaths, day_files

# Days of conversation (daily logs) before a section is called unused: a week of life.
PRUNE_AFTER_DAYS = 7
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TopicTurn:
    """One turn: its id, time and the sections it hit."""

    turn_id: int
    ts: str
    sections_hit: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopicState:
    """``index_state.json``, field for field (docs/retrieval.md, "Section gating")."""

    window_size: int = 5
    dominant_threshold: float = 0.7
    turns: tuple[TopicTurn, ...] = ()
    proportions: Mapping[str, float] = field(default_factory=dict)
    current_topic: str = ""
    topic_summary: str = ""
    last_updated: str = ""
    miss_count: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The documented JSON layout."""
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
    """``2026-02-08T12:00:00Z``, the file's time format (UTC)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def compute_proportions(turns: Iterable[TopicTurn]) -> dict[str, float]:
    """Proportion = section occurrences / all occurrences in the window.

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
    """A hit section resets to 0, every other known section counts one more."""
    hit_set = set(hit)
    sections = set(miss_count) | set(known) | hit_set
    return {s: 0 if s in hit_set else miss_count.get(s, 0) + 1 for s in sorted(sections)}


def prune_suggestions(miss_count: Mapping[str, int], after: int) -> list[str]:
    """Sections missed ``after`` (3) or more turns in a row: candidates to merge or drop."""
    return sorted(s for s, n in miss_count.items() if n >= after)


def record_turn(
    state: TopicState, sections_hit: Iterable[str], now: datetime, known: Iterable[str] = ()
) -> TopicState:
    """Add the turn, trim to the window, recompute proportions and misses."""
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


def sections_to_query(
    state: TopicState | None,
    message: str,
    known_sections: Sequence[str],
    keywords: Mapping[str, Iterable[str]] | None = None,
    about: Iterable[str] = (),
) -> list[str] | None:
    """Which sections this turn may query; None means all of them.

    With a dominant section: the dominant one, every section the message names
    (:func:`section_words`), and every section of ``about`` (close to the message in meaning,
    found by the caller). Without one (or without any state): None.
    """
    if state is None:
        return None
    top = dominant_section(state.proportions, state.dominant_threshold)
    if top is None:
        return None
    close = set(about)
    allowed = [top]
    for section in known_sections:
        if section == top:
            continue
        if section in close or named(message, section_words(section, keywords)):
            allowed.append(section)
    return allowed


@dataclass(frozen=True, slots=True)
class TopicOverview:
    """What the index knows that a person may act on (``/stats``, the memory page)."""

    current_topic: str = ""  # MEMORY_TOPIC.md's topic ("" until one section stays dominant)
    topic_summary: str = ""
    share: float = 0.0  # the current topic's proportion in the window
    dominant: str | None = None  # the section gating the next turn, if any
    proportions: Mapping[str, float] = field(default_factory=dict)
    prune: tuple[str, ...] = ()  # sections missed 3+ turns running: merge or drop them?
    turns: int = 0


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

    def _prune(self, user_key: str, state: TopicState) -> tuple[str, ...]:
        """The sections to suggest merging or dropping: none until the person has talked on
        :data:`PRUNE_AFTER_DAYS` days (on day one every section but today's is "unused")."""
        if len(day_files(self._paths(user_key))) < PRUNE_AFTER_DAYS:
            return ()
        return tuple(prune_suggestions(state.miss_count, self.config.miss_suggest_after))

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
        summaries: Mapping[str, str] | None = None,
    ) -> TurnUpdate:
        """Record one turn's hits and return the new state and its advice.

        ``summary`` is the topic's one-line summary; ``summaries`` maps sections to one, and
        the stable dominant section's is used (the pipeline passes what this turn used of each
        section). Section names and summaries are masked like every user-derived text, so the
        state and MEMORY_TOPIC.md never hold a secret (PCAI writes sections masked).
        """
        sections_hit = [mask(s) for s in sections_hit]
        known_sections = [mask(s) for s in known_sections]
        by_section = {mask(k): v for k, v in (summaries or {}).items()}
        with user_lock(self.data_dir, user_key):
            state = record_turn(
                self.load(user_key) or self.fresh(), sections_hit, now, known_sections
            )
            prune = self._prune(user_key, state)
            stable = stable_dominant(state, self.config.topic_stable_turns)
            summary = mask(summary or (by_section.get(stable, "") if stable else ""))
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
        about: Iterable[str] = (),
    ) -> list[str] | None:
        """Which sections this turn may query for ``user_key`` (None: all of them)."""
        return sections_to_query(self.load(user_key), message, known_sections, keywords, about)

    def overview(self, user_key: str) -> TopicOverview:
        """The current topic, its summary and the sections suggested for pruning.

        Read-only: ``/stats`` and the memory page call it; nothing is written.
        """
        state = self.load(user_key)
        if state is None:
            return TopicOverview()
        return TopicOverview(
            current_topic=state.current_topic,
            topic_summary=state.topic_summary,
            share=state.proportions.get(state.current_topic, 0.0),
            dominant=dominant_section(state.proportions, state.dominant_threshold),
            proportions=dict(state.proportions),
            prune=self._prune(user_key, state),
            turns=len(state.turns),
        )

    def redact(self, user_key: str, redact: Callable[[str], str]) -> bool:
        """Pass the topic summary through ``redact`` (``/forget``); True when it changed.

        The summary quotes what a turn used of a memory, so forgetting that memory must
        reach it too (index_state.json and MEMORY_TOPIC.md). The file's other values stay.
        """
        path = self._paths(user_key).index_state
        with user_lock(self.data_dir, user_key):
            try:
                state = TopicState.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError, KeyError):
                return False  # nothing readable to redact; a turn sets a corrupt one aside
            summary = redact(state.topic_summary)
            if summary == state.topic_summary:
                return False
            state = replace(state, topic_summary=summary)
            self.save(user_key, state)
            if state.current_topic:
                self._write_topic(user_key, state)
        return True

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
