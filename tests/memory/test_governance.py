"""Conflicts, supersedes chains, archaeology, status changes, forget and export."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from memory import Memory
from memory.base.markdown import Entry
from memory.base.sections import choose_section
from memory.errors import EntryNotFoundError
from memory.index.sources import KIND_MEMORY
from memory.write.consent import UserAct
from memory.write.governance import (
    chain_of,
    chains,
    derive_summary,
    guess_class,
    summary_of,
)

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=TPE)
ALICE = "cli_alice"
BOB = "cli_bob"
TOPIC = "preference:color"


def _hits(library: Memory, user: str, query: str) -> list[str]:
    hits = library.search(user, query, 10)
    return [h.chunk.unit_id for h in hits if h.chunk.kind == KIND_MEMORY]


def _save(
    library: Memory,
    text: str,
    now: datetime,
    *,
    user: str = ALICE,
    replace: bool | None = None,
    topic: str = "",
) -> Entry:
    fields = {"canonical_topic": topic} if topic else None
    p = library.confirm.propose(user, text, now=now, fields=fields)
    return library.confirm.confirm(_act(library, user, p.id, replace), now=now)


def _act(library: Memory, user: str, pid: str, replace: bool | None) -> UserAct:
    """The user's "replace" (or plain "confirm", which adds beside a conflict)."""
    return library.user_acts.act(user, pid, "replace" if replace else "confirm", via="reply")


def test_same_topic_conflict_replace_builds_a_chain_and_search_returns_its_tail(
    library: Memory,
) -> None:
    blue = _save(library, "我最喜歡的顏色是藍色", T0, topic=TOPIC)
    p = library.confirm.propose(
        ALICE,
        "我最喜歡的顏色是綠色",
        now=T0 + timedelta(days=3),
        fields={"canonical_topic": TOPIC},
    )
    assert p.conflict_ids == (blue.id,)
    assert p.conflicts_shown == f"{blue.id}: {summary_of(blue)}"  # the edge asks "add or replace?"
    green = library.confirm.confirm(_act(library, ALICE, p.id, True), now=T0 + timedelta(days=3))
    assert green.supersedes == (blue.id,)

    old = library.service.document(ALICE).by_id()[blue.id]
    assert old.status == "deprecated"
    assert old.status_changed_at == "2026-11-04T09:00:00+08:00"
    assert old.history == (
        f"2026-11-04T09:00:00+08:00 active -> deprecated: replaced by {green.id}",
    )
    assert _hits(library, ALICE, "最喜歡的顏色") == [green.id]

    red = _save(library, "我最喜歡的顏色是紅色", T0 + timedelta(days=9), replace=True, topic=TOPIC)
    assert red.supersedes == (green.id,)
    assert _hits(library, ALICE, "最喜歡的顏色") == [red.id]

    by_topic = library.governance.archaeology(ALICE, TOPIC)
    assert [e.id for e in by_topic] == [blue.id, green.id, red.id]
    assert [e.created_at[:10] for e in by_topic] == ["2026-11-01", "2026-11-04", "2026-11-10"]
    assert [e.status for e in by_topic] == ["deprecated", "deprecated", "active"]
    assert [e.id for e in library.governance.archaeology(ALICE, blue.id)] == [
        blue.id,
        green.id,
        red.id,
    ]


def test_very_similar_memory_conflicts_without_a_topic(library: Memory) -> None:
    blue = _save(library, "我喜歡藍色", T0)
    similar = library.confirm.propose(ALICE, "我喜歡綠色", now=T0)
    assert similar.conflict_ids == (blue.id,)
    unrelated = library.confirm.propose(ALICE, "下週三要去東京出差三天", now=T0)
    assert unrelated.conflict_ids == ()
    # Replace without a topic: the new entry inherits none, but the chain still links.
    green = library.confirm.confirm(_act(library, ALICE, similar.id, True), now=T0)
    assert green.supersedes == (blue.id,)
    assert [e.id for e in library.governance.archaeology(ALICE, green.id)] == [blue.id, green.id]


def test_add_keeps_both_versions_active(library: Memory) -> None:
    first = _save(library, "我住在台北", T0, topic="home:city")
    p = library.confirm.propose(
        ALICE, "我搬到台中了", now=T0, fields={"canonical_topic": "home:city"}
    )
    assert p.conflict_ids == (first.id,)
    second = library.confirm.confirm(_act(library, ALICE, p.id, False), now=T0)  # "新增"
    statuses = {e.id: e.status for e in library.service.entries(ALICE)}
    assert statuses == {first.id: "active", second.id: "active"}
    assert second.supersedes == ()


def test_replaced_topic_is_inherited(library: Memory) -> None:
    old = _save(library, "專案 Apollo 使用 MySQL 資料庫", T0, topic="apollo:database")
    # No topic named: e5 finds the old entry by similarity (cosine ~0.92 >= 0.9).
    p = library.confirm.propose(ALICE, "專案 Apollo 改用 PostgreSQL 資料庫", now=T0)
    assert p.conflict_ids == (old.id,)
    new = library.confirm.confirm(_act(library, ALICE, p.id, True), now=T0)
    # Replacing it carries the topic over, so the chain stays findable by that topic.
    assert new.canonical_topic == "apollo:database"
    assert new.supersedes == (old.id,)
    assert [e.id for e in library.governance.archaeology(ALICE, "apollo:database")] == [
        old.id,
        new.id,
    ]
    assert library.get(ALICE, old.id).status == "deprecated"


def test_conflicts_never_cross_users(library: Memory) -> None:
    _save(library, "我最喜歡的顏色是藍色", T0, topic=TOPIC)
    p = library.confirm.propose(
        BOB, "我最喜歡的顏色是藍色", now=T0, fields={"canonical_topic": TOPIC}
    )
    assert p.conflict_ids == ()


def test_restore_makes_a_deprecated_entry_searchable_again(library: Memory) -> None:
    blue = _save(library, "我最喜歡的顏色是藍色", T0, topic=TOPIC)
    green = _save(library, "我最喜歡的顏色是綠色", T0, replace=True, topic=TOPIC)
    assert _hits(library, ALICE, "最喜歡的顏色") == [green.id]
    restored = library.governance.restore(ALICE, blue.id, now=T0 + timedelta(days=1))
    assert restored.status == "active"
    assert restored.history[-1] == "2026-11-02T09:00:00+08:00 deprecated -> active: restored"
    # The restored version is the chain's current one: the version that replaced it steps back.
    assert _hits(library, ALICE, "最喜歡的顏色") == [blue.id]
    assert library.get(ALICE, green.id).status == "deprecated"


def test_forget_removes_from_markdown_and_index(library: Memory) -> None:
    keep = _save(library, "我喜歡爬山", T0)
    gone = _save(library, "我討厭香菜", T0)
    with pytest.raises(EntryNotFoundError):
        library.service.forget(BOB, gone.id)
    removed = library.service.forget(ALICE, gone.id)
    assert removed.text == "我討厭香菜"
    assert [e.id for e in library.service.entries(ALICE)] == [keep.id]
    assert "香菜" not in library.service.paths(ALICE).memory_md.read_text(encoding="utf-8")
    assert gone.id not in library.store.indexed_units(ALICE, "MEMORY.md")
    assert gone.id not in _hits(library, ALICE, "香菜")


def test_export_includes_status_and_chains(library: Memory) -> None:
    blue = _save(library, "我最喜歡的顏色是藍色", T0, topic=TOPIC)
    green = _save(
        library, "我最喜歡的顏色是綠色", T0 + timedelta(days=1), replace=True, topic=TOPIC
    )
    library.access.bump(ALICE, [green.id], T0 + timedelta(days=2))
    records = {r["id"]: r for r in json.loads(library.export(ALICE, "json"))}
    markdown = library.export(ALICE)
    assert set(records) == {green.id}  # one record per memory; its older versions inside
    [old] = records[green.id]["versions"]
    assert old["id"] == blue.id and old["status"] == "deprecated"
    assert old["superseded_by"] == [green.id]
    assert records[green.id]["supersedes"] == [blue.id]
    assert records[green.id]["chain"] == [blue.id, green.id]
    assert records[green.id]["access_count"] == 1
    assert "status: deprecated" in markdown
    assert f"<!-- chain: {blue.id} (2026-11-01, deprecated) -> {green.id}" in markdown


def test_pure_helpers() -> None:
    assert choose_section("我喜歡藍色") == "偏好 Preferences"
    assert choose_section("I prefer window seats") == "偏好 Preferences"
    assert choose_section("Project Apollo ships Friday") == "工作 Work"
    assert choose_section("my wife's birthday is May 3") == "個人 Personal"
    assert choose_section("a person of note") == "General"  # "son" is not in "person"
    assert choose_section("我喜歡藍色", ["偏好 preferences"]) == "偏好 preferences"
    assert choose_section("the sky is blue today") == "General"
    assert guess_class("回答一律使用繁體中文") == "policy"
    assert guess_class("Always answer in English") == "policy"
    assert guess_class("昨天去了動物園") == "episodic"
    assert derive_summary("短句") == ""
    long = "第一句話說明了重點。" + "後面還有很多補充說明" * 10
    assert derive_summary(long) == "第一句話說明了重點"
    assert len(derive_summary("很" * 80)) == 50


def test_chain_walks_both_directions() -> None:
    a = Entry(id="a", text="v1", created_at="2026-01-01")
    b = Entry(id="b", text="v2", created_at="2026-01-02", supersedes=("a",))
    c = Entry(id="c", text="v3", created_at="2026-01-03", supersedes=("b", "gone"))
    x = Entry(id="x", text="other", created_at="2026-01-01")
    assert [e.id for e in chain_of([c, x, a, b], "a")] == ["a", "b", "c"]
    assert [e.id for e in chain_of([c, x, a, b], "x")] == ["x"]
    assert [[e.id for e in ch] for ch in chains([c, x, a, b])] == [["a", "b", "c"]]
