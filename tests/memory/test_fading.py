"""Nothing is archived before its owner was told it is fading (issue 13, item 2).

The weekly "these memories are fading: keep?" message is recorded in ``pcai.db``; the nightly
job archives only what its owner was told about at least ``fade_notice_days`` (7) before, and
after the memory was last kept or restored.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bot.app import Services
from memory.base.markdown import Entry, MemoryDocument
from memory.write.curation import Curation
from memory.write.lifecycle import Lifecycle

TPE = timezone(timedelta(hours=8))
NOW = datetime(2026, 11, 22, 3, 0, tzinfo=TPE)
USER = "telegram_42"


def _iso(days_ago: float) -> str:
    return (NOW - timedelta(days=days_ago)).isoformat(timespec="seconds")


def _write(services: Services, *entries: Entry) -> None:
    services.memory.write_document(
        USER, MemoryDocument(sections=("General",), entries=tuple(entries))
    )


def _status(services: Services, entry_id: str) -> str:
    return services.memory.document(USER).by_id()[entry_id].status


def test_fading_lists_what_will_fall_below_the_archive_line_within_a_week(
    services: Services,
) -> None:
    _write(
        services,
        Entry(id="m-new", text="我昨天開始學吉他", created_at=_iso(1)),
        # 55 days: health 0.170 now, below 0.15 within 7 days.
        Entry(id="m-soon", text="上個月去了一趟花蓮旅行", created_at=_iso(55)),
        Entry(id="m-old", text="I once tried durian ice cream", created_at=_iso(90)),
        Entry(id="m-core", text="回答一律使用繁體中文", is_core=True, created_at=_iso(300)),
        Entry(id="m-gone", text="很久以前的舊記憶", status="archived", created_at=_iso(200)),
        Entry(id="m-v1", text="舊版本", status="deprecated", created_at=_iso(200)),
    )
    fading = services.lifecycle.fading(USER, NOW)
    assert [f.entry.id for f in fading] == ["m-old", "m-soon"]  # weakest first
    assert fading[1].health > 0.15  # not yet below the line, but will be within the week
    assert [f.entry.id for f in services.lifecycle.to_tell(USER, NOW)] == ["m-old", "m-soon"]
    services.lifecycle.told(USER, ["m-old"], NOW)
    assert [f.entry.id for f in services.lifecycle.to_tell(USER, NOW)] == ["m-soon"]


def test_archived_only_a_week_after_the_user_was_told(services: Services) -> None:
    _write(services, Entry(id="m-old", text="I once tried durian ice cream", created_at=_iso(90)))
    lifecycle = services.lifecycle
    assert [(c.new) for c in lifecycle.run_lifecycle(NOW).changes] == ["low_priority"]
    assert lifecycle.run_lifecycle(NOW + timedelta(days=30)).changes == []  # never told
    assert _status(services, "m-old") == "low_priority"

    told = NOW + timedelta(days=30)
    lifecycle.told(USER, ["m-old"], told)
    assert lifecycle.run_lifecycle(told + timedelta(days=6, hours=23)).changes == []
    changes = lifecycle.run_lifecycle(told + timedelta(days=7)).changes
    assert [(c.entry_id, c.old, c.new) for c in changes] == [("m-old", "low_priority", "archived")]
    # Archived: nothing left to tell, the notice is dropped.
    assert services.lifecycle.fades is not None
    assert services.lifecycle.fades.told_at(USER) == {}


def test_keep_after_the_notice_cancels_it(services: Services) -> None:
    _write(services, Entry(id="m-old", text="I once tried durian ice cream", created_at=_iso(90)))
    services.lifecycle.told(USER, ["m-old"], NOW - timedelta(days=10))
    curation = Curation(services.confirm, services.user_acts.check)
    act = services.user_acts.act(USER, "m-old", "keep", via="button")
    kept = curation.keep(act, now=NOW - timedelta(days=2))
    assert kept.user_weight == 6 and kept.refreshed_at
    assert services.lifecycle.run_lifecycle(NOW).changes == []
    assert _status(services, "m-old") == "active"
    # Weight 6 keeps health at 0.25 * 0.6 = 0.15 or more: it may rank lower, never fade out.
    later = NOW + timedelta(days=400)
    assert services.lifecycle.to_tell(USER, later) == []
    assert [c.new for c in services.lifecycle.run_lifecycle(later).changes] == ["low_priority"]
    assert _status(services, "m-old") == "low_priority"
    assert services.lifecycle.fades is not None
    assert services.lifecycle.fades.told_at(USER) == {}  # the old notice is dropped


def test_a_notice_from_before_a_restore_does_not_count(services: Services) -> None:
    _write(services, Entry(id="m-old", text="I once tried durian ice cream", created_at=_iso(90)))
    services.lifecycle.told(USER, ["m-old"], NOW - timedelta(days=80))
    services.governance.set_status(
        USER, "m-old", "archived", now=NOW - timedelta(days=72), reason="test"
    )
    services.governance.restore(USER, "m-old", now=NOW - timedelta(days=70))
    # Seventy days after the restore it fades again: told 80 days ago is not told.
    assert [c.new for c in services.lifecycle.run_lifecycle(NOW).changes] == ["low_priority"]
    assert [f.entry.id for f in services.lifecycle.to_tell(USER, NOW)] == ["m-old"]


def test_an_entry_that_recovers_loses_its_notice(services: Services) -> None:
    _write(services, Entry(id="m-used", text="Wi-Fi 的名稱是 HomeNet 5G", created_at=_iso(60)))
    services.lifecycle.told(USER, ["m-used"], NOW - timedelta(days=1))
    for _ in range(10):  # used again and again: healthy
        services.access.bump(USER, ["m-used"], NOW)
    assert services.lifecycle.fading(USER, NOW) == []
    services.lifecycle.run_lifecycle(NOW)
    assert services.lifecycle.fades is not None
    assert services.lifecycle.fades.told_at(USER) == {}


def test_without_a_notice_book_nothing_is_ever_archived(services: Services) -> None:
    _write(services, Entry(id="m-old", text="I once tried durian ice cream", created_at=_iso(400)))
    bare = Lifecycle(services.memory, services.access, services.settings.lifecycle)
    bare.told(USER, ["m-old"], NOW - timedelta(days=30))  # nowhere to record it
    assert [c.new for c in bare.run_lifecycle(NOW).changes] == ["low_priority"]
    assert bare.run_lifecycle(NOW + timedelta(days=100)).changes == []
