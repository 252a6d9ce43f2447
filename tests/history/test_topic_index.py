"""The section-proportion index (docs/retrieval.md, "Section gating")."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from history.config import TopicIndexConfig
from history.topic_index import (
    TopicIndex,
    TopicOverview,
    TopicState,
    compute_proportions,
    dominant_section,
    record_turn,
    sections_to_query,
    update_miss_counts,
)

T0 = datetime(2026, 2, 8, 12, 0, tzinfo=UTC)
EXAMPLE_TABLE = [["重要決定"], ["重要決定", "待辦"], ["重要決定"], ["重要決定"], ["重要決定"]]
SECTIONS = ["關於我", "關於老蔡", "重要決定", "待辦"]


def test_the_documented_example_table() -> None:
    state = TopicState()
    for i, hit in enumerate(EXAMPLE_TABLE):
        state = record_turn(state, hit, T0 + timedelta(minutes=5 * i))
    assert state.proportions == {"重要決定": 0.833, "待辦": 0.167}
    assert dominant_section(state.proportions, 0.7) == "重要決定"
    assert [t.turn_id for t in state.turns] == [1, 2, 3, 4, 5]
    assert state.turns[0].ts == "2026-02-08T12:00:00Z"
    # dominance: only 重要決定, plus what the message names
    assert sections_to_query(state, "今天天氣如何", SECTIONS) == ["重要決定"]
    assert sections_to_query(state, "what's left on my todo list?", SECTIONS) == [
        "重要決定",
        "待辦",
    ]
    assert sections_to_query(state, "老蔡最近好嗎", SECTIONS, {"關於老蔡": ["老蔡"]}) == [
        "重要決定",
        "關於老蔡",
    ]


def test_no_dominant_section_means_all_sections() -> None:
    state = TopicState()
    for hit in (["關於我"], ["待辦"], ["重要決定"]):
        state = record_turn(state, hit, T0)
    assert dominant_section(state.proportions, 0.7) is None
    assert sections_to_query(state, "anything", SECTIONS) is None
    assert sections_to_query(None, "anything", SECTIONS) is None


def test_window_trims_and_proportions_follow() -> None:
    state = TopicState(window_size=3)
    for hit in (["A"], ["A"], ["A"], ["B"], ["B"]):
        state = record_turn(state, hit, T0)
    assert [t.turn_id for t in state.turns] == [3, 4, 5]
    assert state.proportions == {"B": 0.667, "A": 0.333}
    assert compute_proportions([]) == {}


def test_miss_counts_reset_on_hit_and_grow_otherwise() -> None:
    counts = update_miss_counts({}, ["A"], ["A", "B", "C"])
    assert counts == {"A": 0, "B": 1, "C": 1}
    counts = update_miss_counts(counts, ["B"], ["A", "B", "C"])
    assert counts == {"A": 1, "B": 0, "C": 2}


def _a_week_of_talk(data_dir: Path, user: str) -> None:
    """Seven days of daily logs: the advice on unused sections is due (not on day one)."""
    logs = data_dir / "users" / user / "memory"
    logs.mkdir(parents=True, exist_ok=True)
    for day in range(1, 8):
        (logs / f"2026-10-{day:02d}.md").write_text("", encoding="utf-8")


def test_service_writes_state_topic_and_suggests_pruning(tmp_path: Path) -> None:
    index = TopicIndex(tmp_path, TopicIndexConfig())
    user = "telegram_1"
    _a_week_of_talk(tmp_path, user)
    assert index.sections_to_query(user, "hi", SECTIONS) is None  # no state yet
    updates = [
        index.record(user, hit, T0 + timedelta(minutes=i), SECTIONS, summary="Ollama Fallback")
        for i, hit in enumerate(EXAMPLE_TABLE)
    ]
    topic_file = tmp_path / "users" / user / "MEMORY_TOPIC.md"
    # 1/1, then 2/3 (< 0.7), 3/4 and 4/5: dominant two turns running at turn 4, written then
    assert [u.dominant for u in updates] == ["重要決定", None, "重要決定", "重要決定", "重要決定"]
    assert [u.topic_written for u in updates] == [False, False, False, True, False]
    assert "重要決定" in topic_file.read_text("utf-8")
    assert updates[2].prune == ("關於我", "關於老蔡")  # missed 3 turns in a row
    data = json.loads((tmp_path / "users" / user / "index_state.json").read_text("utf-8"))
    assert list(data) == [
        "window_size",
        "dominant_threshold",
        "turns",
        "proportions",
        "current_topic",
        "topic_summary",
        "last_updated",
        "miss_count",
    ]
    assert data["proportions"] == {"重要決定": 0.833, "待辦": 0.167}
    assert data["current_topic"] == "重要決定" and data["topic_summary"] == "Ollama Fallback"
    assert data["miss_count"] == {"關於我": 5, "關於老蔡": 5, "待辦": 3, "重要決定": 0}
    assert index.sections_to_query(user, "下一步的待辦？", SECTIONS) == ["重要決定", "待辦"]


def test_corrupt_state_is_set_aside(tmp_path: Path) -> None:
    index = TopicIndex(tmp_path, TopicIndexConfig())
    path = tmp_path / "users" / "cli_x" / "index_state.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"turns": [', encoding="utf-8")
    assert index.load("cli_x") is None
    update = index.record("cli_x", ["待辦"], T0)
    assert update.state.proportions == {"待辦": 1.0}
    assert any(".corrupt-" in p.name for p in path.parent.iterdir())


def test_overview_and_redaction_of_the_topic_summary(tmp_path: Path) -> None:
    index = TopicIndex(tmp_path, TopicIndexConfig())
    user = "cli_ann"
    assert index.overview(user) == TopicOverview()  # nothing recorded yet
    _a_week_of_talk(tmp_path, user)
    for i in range(3):
        index.record(
            user,
            ["偏好 Preferences"],
            T0 + timedelta(minutes=i),
            ["偏好 Preferences", "工作 Work"],
            summaries={"偏好 Preferences": "我喜歡喝拿鐵咖啡", "工作 Work": "not this one"},
        )
    seen = index.overview(user)
    assert (seen.current_topic, seen.topic_summary, seen.share) == (
        "偏好 Preferences",
        "我喜歡喝拿鐵咖啡",
        1.0,
    )
    assert seen.dominant == "偏好 Preferences" and seen.prune == ("工作 Work",)
    assert seen.turns == 3
    topic_md = tmp_path / "users" / user / "MEMORY_TOPIC.md"
    assert "我喜歡喝拿鐵咖啡" in topic_md.read_text("utf-8")

    assert index.redact(user, lambda text: text.replace("拿鐵", "[forgotten]")) is True
    assert index.overview(user).topic_summary == "我喜歡喝[forgotten]咖啡"
    assert "拿鐵" not in topic_md.read_text("utf-8")
    assert "拿鐵" not in (tmp_path / "users" / user / "index_state.json").read_text("utf-8")
    assert index.overview(user).proportions == {"偏好 Preferences": 1.0}  # the rest stays
    assert index.redact(user, lambda text: text) is False
    assert index.redact("cli_nobody", lambda text: "") is False
