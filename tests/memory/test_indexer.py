"""The change detector and rebuild: hand edits of the Markdown reach the index."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import pytest

from memory import Memory
from memory.base.fsutil import append_text
from memory.base.logs import format_record, log_header
from memory.errors import InvalidUserKeyError
from memory.index import sources
from memory.index.chunks import IndexStore
from memory.index.indexer import SyncStats

USER = "cli_alice"


def _chunk_ids(store: IndexStore, user: str, path: str = "MEMORY.md") -> dict[str, int]:
    rows = store.conn.execute(
        "SELECT unit_id, id FROM chunks WHERE user_key=? AND path=?", (user, path)
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def _hand_edit(path: Path, text: str) -> None:
    # A person's editor writes the file some time after PCAI did: move mtime on explicitly
    # so the test does not depend on the filesystem's timestamp granularity.
    st = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _texts(library: Memory, user: str, query: str) -> list[str]:
    return [h.chunk.text for h in library.search(user, query, 10)]


def test_hand_edit_reindexes_only_changed_entries(library: Memory) -> None:
    mem = library.service
    coffee = mem.remember(USER, "我每天早上喝咖啡，不加糖")
    blue = mem.remember(USER, "最喜歡的顏色是藍色")
    deploy = mem.remember(USER, "We deploy to production on Fridays")
    before = _chunk_ids(library.store, USER)
    assert set(before) == {coffee.id, blue.id, deploy.id}

    md = mem.paths(USER).memory_md
    text = md.read_text(encoding="utf-8")
    text = text.replace("最喜歡的顏色是藍色", "最喜歡的顏色是綠色")  # changed
    text = text.replace(f"- We deploy to production on Fridays\n  - id: {deploy.id}", "- gone")
    text = text.replace("- gone", "")  # removed
    text += "\n- I play the cello on Sundays\n"  # added by hand, no fields
    _hand_edit(md, text)

    stats = library.service.indexer.sync_file(USER, "MEMORY.md")
    assert stats == SyncStats(added=2, removed=2, files=1)
    after = _chunk_ids(library.store, USER)
    assert after[coffee.id] == before[coffee.id]  # untouched entry kept its chunk
    (blue_chunk,) = library.store.chunks([after[blue.id]]).values()
    assert blue_chunk.text == "最喜歡的顏色是綠色"  # edited entry re-indexed
    assert deploy.id not in after
    assert len(after) == 3

    assert any("綠色" in t for t in _texts(library, USER, "綠色"))
    assert not any("藍色" in t for t in _texts(library, USER, "藍色"))
    assert any("cello" in t for t in _texts(library, USER, "cello"))
    assert not any("Fridays" in t for t in _texts(library, USER, "deploy Fridays"))
    # Nothing changed since: a second sync does nothing.
    again = library.service.indexer.sync_file(USER, "MEMORY.md")
    assert (again.added, again.removed) == (0, 0)


def test_search_picks_up_a_hand_edit_by_itself(library: Memory) -> None:
    library.service.remember(USER, "我每天下午都喜歡喝一杯茶")
    md = library.service.paths(USER).memory_md
    _hand_edit(md, md.read_text(encoding="utf-8") + "\n- 新加的：週末去爬山 hiking\n")
    assert any("爬山" in t for t in _texts(library, USER, "爬山"))


def test_same_size_edit_right_after_a_write_is_seen(library: Memory) -> None:
    # An edit within the filesystem's timestamp tick and of the same size must not be missed.
    library.service.remember(USER, "我每天早上都喜歡喝咖啡")
    md = library.service.paths(USER).memory_md
    text = md.read_text(encoding="utf-8")
    md.write_text(text.replace("喜歡", "討厭"), encoding="utf-8")
    assert any("討厭" in t for t in _texts(library, USER, "咖啡"))


def test_deleted_file_drops_its_chunks(library: Memory) -> None:
    library.service.remember(USER, "something to forget")
    library.service.paths(USER).memory_md.unlink()
    stats = library.service.indexer.sync_user(USER)
    assert stats.removed == 1 and library.store.count(USER) == 0


def test_daily_logs_and_summaries_are_indexed_incrementally(library: Memory) -> None:
    paths = library.service.paths(USER)
    log = paths.daily_log("2026-11-22")
    t = datetime(2026, 11, 22, 9, 0, 0)
    append_text(log, log_header("2026-11-22"))
    for text in ("討論了資料庫備份", "今天午餐吃了一碗拉麵", "下午開會討論 roadmap"):
        append_text(log, format_record(t, "user", text))
    paths.memory_full_md.write_text("## 2026-11-22 摘要\n資料庫備份策略：每天凌晨三點\n")
    indexer = library.service.indexer
    assert indexer.sync_user(USER).added == 4
    rel = "memory/2026-11-22.md"
    before = _chunk_ids(library.store, USER, rel)

    # (A line of content: the bot's bookkeeping, "好的，我記住了", is no search result.)
    append_text(log, format_record(t, "assistant", "backup plan 每天凌晨三點", ref="tg-9"))
    _hand_edit(log, log.read_text(encoding="utf-8"))
    second = indexer.sync_file(USER, rel)
    # The new record, plus the neighbours whose index context now includes it.
    touched = min(sources.LOG_CONTEXT_AFTER, 3)
    assert second == SyncStats(added=1 + touched, removed=touched, files=1)
    after = _chunk_ids(library.store, USER, rel)
    assert after["2026-11-22#L3"] == before["2026-11-22#L3"]  # the first record untouched
    assert len(after) == 4

    kinds = {h.chunk.kind for h in library.search(USER, "資料庫備份", 10)}
    assert {"log", "summary"} <= kinds
    refs = {r for h in library.search(USER, "backup plan", 10) for r in h.chunk.refs}
    assert "tg-9" in refs


def test_long_entry_is_chunked_within_limits(library: Memory) -> None:
    long_text = "".join(
        f"第{i}點：部署前要先備份資料庫。Step {i}: back up first. " for i in range(150)
    )
    entry = library.service.remember(USER, long_text)
    rows = library.store.conn.execute(
        "SELECT ordinal, tokens FROM chunks WHERE unit_id=? ORDER BY ordinal", (entry.id,)
    ).fetchall()
    assert len(rows) > 1
    assert all(r[1] <= 400 for r in rows)
    assert [r[0] for r in rows] == list(range(len(rows)))


def test_two_users_never_see_each_other(library: Memory) -> None:
    mem = library.service
    mem.remember("cli_alice", "Alice 的秘密：喜歡咖啡 coffee")
    mem.remember("telegram_42", "Bob 的秘密：喜歡咖啡 coffee")
    for user, mine, other in (("cli_alice", "Alice", "Bob"), ("telegram_42", "Bob", "Alice")):
        hits = mem.search(user, "咖啡 coffee 秘密", 10)
        assert hits and all(h.chunk.user_key == user for h in hits)
        assert all(mine in h.chunk.text and other not in h.chunk.text for h in hits)
        assert [e.text.split(" ")[0] for e in mem.entries(user)] == [f"{mine}"]
        exported = mem.export_json(user)
        assert len(exported) == 1 and other not in str(exported)
        assert other not in mem.export_markdown(user)
    assert mem.search("cli_carol", "咖啡 coffee", 10) == []


@pytest.mark.parametrize(
    "bad", ["../x", "cli_../../etc", "cli_a/b", "", "cli_", "Cli_x", "cli_x\n", "/abs", "cli_.."]
)
def test_invalid_user_keys_are_refused(library: Memory, bad: str) -> None:
    mem = library.service
    with pytest.raises(InvalidUserKeyError):
        mem.remember(bad, "text")
    with pytest.raises(InvalidUserKeyError):
        mem.search(bad, "text")
    with pytest.raises(InvalidUserKeyError):
        mem.entries(bad)
    assert not (library.data_dir / "users").exists() or all(
        p.name in ("cli_alice",) for p in (library.data_dir / "users").iterdir()
    )


def test_forced_reindex_of_an_intact_index_re_embeds_nothing(library: Memory) -> None:
    for text in ("喜歡咖啡", "likes blue 藍色", "deploys on Fridays"):
        library.service.remember(USER, text)
    before = _chunk_ids(library.store, USER)
    stats = library.service.reindex(USER)
    assert stats.added == 0 and stats.removed == 0
    assert _chunk_ids(library.store, USER) == before


def test_a_sync_of_an_unchanged_person_reads_their_states_once(library: Memory) -> None:
    """The minute job syncs every person: their unchanged files cost one read of the states,
    not a query a file, and a hand edit among them is still indexed."""
    paths = library.service.paths(USER)
    library.service.remember(USER, "I keep bees on the roof")
    for day in range(1, 21):
        log = paths.daily_log(f"2026-11-{day:02d}")
        append_text(log, log_header(f"2026-11-{day:02d}"))
        append_text(log, format_record(datetime(2026, 11, day, 9), "user", f"day {day} notes"))
    hour_ago = time.time_ns() - 3_600 * 10**9  # out of the racy window: states are kept
    for path in (paths.memory_md, *paths.root.glob("memory/*.md")):
        os.utime(path, ns=(hour_ago, hour_ago))
    indexer = library.service.indexer
    assert indexer.sync_user(USER).files == 21

    statements: list[str] = []
    library.store.conn.set_trace_callback(statements.append)
    try:
        assert indexer.sync_user(USER) == SyncStats()
        quiet = len(statements)
        log = paths.daily_log("2026-11-07")
        _hand_edit(log, log.read_text(encoding="utf-8").replace("day 7 notes", "蜂蜜收成"))
        edited = indexer.sync_user(USER)
    finally:
        library.store.conn.set_trace_callback(None)
    assert quiet <= 4, statements[:quiet]  # not one a file (21 files here)
    assert edited.files == 1 and edited.added == 1
    texts = library.store.conn.execute(
        "SELECT text FROM chunks WHERE user_key=? AND path=?", (USER, "memory/2026-11-07.md")
    ).fetchall()
    assert [t for (t,) in texts if "蜂蜜收成" in t]
