"""Access counts say what the user used, not what the bot injected (issue 24 item 1; real e5)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bot.app import Services
from memory.index.sources import KIND_MEMORY

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=timezone(timedelta(hours=8)))
USER = "cli_alice"
HOUR = timedelta(hours=1)


def test_an_injection_counts_once_per_conversation(services: Services) -> None:
    access = services.access
    for minute in range(10):  # ten turns of one conversation inject it ten times
        access.injected(USER, ["m-a"], NOW + timedelta(minutes=minute), HOUR)
    assert access.get(USER, "m-a").count == 1
    assert access.get(USER, "m-a").last_access == (NOW + timedelta(minutes=9)).isoformat()
    # An hour and more after its last use: another conversation, one more.
    access.injected(USER, ["m-a"], NOW + timedelta(minutes=9) + HOUR, HOUR)
    assert access.get(USER, "m-a").count == 2
    # The user's own acts always count, and an injection right after one does not.
    later = NOW + 3 * HOUR
    access.bump(USER, ["m-a"], later)
    access.bump(USER, ["m-a"], later)
    access.injected(USER, ["m-a"], later + timedelta(minutes=1), HOUR)
    assert access.get(USER, "m-a").count == 4


def test_uses_break_ties_but_never_outrank_a_more_relevant_memory(services: Services) -> None:
    best = services.memory.remember(USER, "我每天早上都喝一杯黑咖啡", now=NOW - timedelta(days=1))
    other = services.memory.remember(USER, "我下午偶爾會喝一杯奶茶", now=NOW - timedelta(days=1))

    def ranked() -> list[str]:
        hits = services.memory.search(USER, "我早上喝什麼咖啡", 5, now=NOW)
        return [h.chunk.unit_id for h in hits if h.chunk.kind == KIND_MEMORY]

    assert ranked() == [best.id, other.id]
    for day in range(20):  # used in twenty conversations: the count saturates
        services.access.bump(USER, [other.id], NOW - timedelta(days=20 - day))
    assert services.access.get(USER, other.id).count == 20
    assert ranked() == [best.id, other.id]
