"""Daily logs: the user's day, the shared format, incremental indexing once per line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history.dailylog import DailyLog
from memory.base.guards import mask
from memory.base.logs import parse_log
from memory.base.users import UserPaths
from tests.history.conftest import TAIPEI, HistoryKit

USER = "telegram_42"


def test_records_go_to_the_users_day_in_the_log_format(kit: HistoryKit) -> None:
    log = kit.daily_log
    late = datetime(2026, 2, 8, 16, 30, 5, tzinfo=UTC)  # 00:30:05 on the 9th in Taipei
    assert (
        log.append_user_message(USER, "我喜歡喝咖啡 and tea", late, "tg-100")
        == "memory/2026-02-09.md"
    )
    log.append_user_message(
        USER, "line one\nline two {#fake}", late + timedelta(seconds=1), "tg/101 x"
    )
    path = UserPaths.of(kit.library.data_dir, USER).daily_log("2026-02-09")
    text = path.read_text("utf-8")
    assert text.startswith("# 2026-02-09\n\n- 00:30:05 user: 我喜歡喝咖啡 and tea {#tg-100}\n")
    records = parse_log("2026-02-09", text)
    assert [(r.time, r.text, r.ref) for r in records] == [
        ("00:30:05", "我喜歡喝咖啡 and tea", "tg-100"),
        ("00:30:06", "line one\nline two {#fake}", "tg-101-x"),
    ]


def test_local_zone_when_none_is_configured(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = DailyLog(tmp_path, None)
    when = datetime(2026, 2, 8, 12, 0, tzinfo=TAIPEI)
    assert log.rel_path(when) == f"memory/{when.astimezone():%Y-%m-%d}.md"


def test_a_log_indexed_twice_holds_each_line_once(kit: HistoryKit) -> None:
    s = kit.library
    when = datetime(2026, 2, 8, 4, 0, tzinfo=UTC)
    for i, text in enumerate(["明天去京都", "book the hotel near Gion", "預算五萬元"]):
        kit.daily_log.append_user_message(USER, text, when + timedelta(minutes=i), f"m{i}")
    first = s.indexer.sync_daily_logs()
    again = s.indexer.sync_daily_logs()
    assert (first.added, again.added, again.removed) == (3, 0, 0)
    units = kit.indexed_units(USER, "memory/2026-02-08.md")
    assert sorted(units) == ["m0", "m1", "m2"]

    # a new line adds one unit (the indexer may refresh its neighbour, whose context changed)
    kit.daily_log.append_user_message(
        USER, "remember the JR pass", when + timedelta(minutes=9), "m3"
    )
    third = s.indexer.sync_daily_logs()
    assert third.added - third.removed == 1 and third.added <= 2
    assert s.indexer.sync_daily_logs().added == 0
    assert sorted(kit.indexed_units(USER, "memory/2026-02-08.md")) == ["m0", "m1", "m2", "m3"]
    assert s.store.count(USER) == 4
    hits = s.search(USER, "京都")
    assert hits and hits[0].chunk.unit_id == "m0"


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(max_size=40), min_size=1, max_size=5),
    replays=st.lists(st.integers(0, 4), max_size=6),
)
def test_a_record_appended_again_after_a_crash_is_in_the_log_once(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], replays: list[int]
) -> None:
    """Each message is in the day's log once, however often it is appended again (a replay
    after a crash), and texts that quote another record's tag never hide a message."""
    log = DailyLog(tmp_path_factory.mktemp("log"), TAIPEI)
    when = datetime(2026, 2, 8, 4, 0, tzinfo=UTC)
    sent = [(f"tg-{i}", f"{t} {{#tg-{i + 1}}}\n{{#tg-{i + 1}}}") for i, t in enumerate(texts)]
    for i in [*range(len(sent)), *(r % len(sent) for r in replays)]:
        ref, text = sent[i]
        log.append_user_message(USER, text, when + timedelta(seconds=i), ref)
    day = "2026-02-08"
    records = parse_log(day, UserPaths.of(log.data_dir, USER).daily_log(day).read_text("utf-8"))
    assert [(r.ref, r.text) for r in records] == [(ref, mask(text)) for ref, text in sent]


def test_the_same_id_at_another_time_or_from_another_speaker_is_another_record(
    kit: HistoryKit,
) -> None:
    """Telegram numbers messages per chat: a group's message 7 is not the private chat's."""
    log, when = kit.daily_log, datetime(2026, 2, 8, 4, 0, tzinfo=UTC)
    log.append_user_message(USER, "in private", when, "7")
    log.append_user_message(USER, "in the group", when + timedelta(seconds=3), "7")
    log.append(USER, "summary", "a summary", when, "7")
    log.append_user_message(USER, "in private", when, "7")  # the replay
    path = UserPaths.of(kit.library.data_dir, USER).daily_log("2026-02-08")
    got = [(r.who, r.text) for r in parse_log("2026-02-08", path.read_text("utf-8"))]
    assert got == [("user", "in private"), ("user", "in the group"), ("summary", "a summary")]
