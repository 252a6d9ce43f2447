"""Access counts say what the user used, not what the bot injected (issue 24 item 1; real e5)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bot.app import Services
from memory.index.sources import KIND_MEMORY
from memory.write.consent import Action, NotTheUsersActError, UserAct
from memory.write.curation import Curation, EntryNotLiveError
from memory.write.decisions import SensitiveDataError

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


def test_each_act_of_the_user_on_a_memory_is_one_use(services: Services) -> None:
    curation = Curation(services.confirm, services.user_acts.check)
    e = services.memory.remember(USER, "我每天早上都喝一杯黑咖啡", now=NOW)

    def act(entry_id: str, action: Action, text: str = "") -> UserAct:
        return services.user_acts.act(USER, entry_id, action, via="command", text=text)

    def uses(entry_id: str) -> int:
        return services.access.get(USER, entry_id).count

    curation.pin(act(e.id, "pin"), now=NOW)
    curation.pin(act(e.id, "unpin"), now=NOW)
    curation.scope(act(e.id, "scope", "project:pcai"), now=NOW)
    curation.keep(act(e.id, "keep"), now=NOW)
    assert uses(e.id) == 4
    # An edit: the new version inherits the old one's four, and the edit is one more.
    new = curation.revise(act(e.id, "revise", "我每天早上都喝一杯拿鐵"), now=NOW)
    assert (uses(e.id), uses(new.id)) == (4, 5)
    # Restoring the replaced version makes it current again: it takes the newer one's five,
    # and the restore is one more.
    curation.restore(act(e.id, "restore"), now=NOW)
    assert uses(e.id) == 6
    # A refused act (the guard, a memory no longer live) and a step of a larger act counted
    # by its front end (count=False) add nothing; nor does an act without the user's seal.
    with pytest.raises(SensitiveDataError):
        curation.revise(act(e.id, "revise", "my password is hunter2-Xq9!"), now=NOW)
    with pytest.raises(EntryNotLiveError):
        curation.keep(act(new.id, "keep"), now=NOW)
    curation.pin(act(e.id, "pin"), now=NOW, count=False)
    with pytest.raises(NotTheUsersActError):
        curation.keep(UserAct(USER, e.id, "keep", "command"), now=NOW)
    assert (uses(e.id), uses(new.id)) == (6, 5)
