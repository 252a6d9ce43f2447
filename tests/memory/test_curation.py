"""The user's decisions about confirmed memories: pin, scope, edit, keep, restore (issue 13).

Every one takes the user's sealed act; what the agent could build itself is refused.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from agent.selection import core_layer, scope_layer
from bot.app import Services
from memory.base.markdown import Entry
from memory.errors import EntryNotFoundError
from memory.write.consent import Action, NotTheUsersActError, UserAct, UserActMint
from memory.write.curation import Curation, EntryNotLiveError
from memory.write.decisions import DuplicateMemoryError, InvalidProposalError, SensitiveDataError
from memory.write.governance import chain_of

USER = "telegram_7"
OTHER = "telegram_8"
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@pytest.fixture
def curation(services: Services) -> Curation:
    return Curation(services.confirm, services.user_acts.check)


def act(services: Services, entry_id: str, action: Action, text: str = "") -> UserAct:
    return services.user_acts.act(USER, entry_id, action, via="command", text=text)


def test_pin_makes_a_memory_core_and_unpin_undoes_it(
    services: Services, curation: Curation
) -> None:
    tea = services.memory.remember(USER, "回答一律使用繁體中文", now=T0)
    pinned = curation.pin(act(services, tea.id, "pin"), now=T0 + timedelta(minutes=1))
    assert pinned.is_core and pinned.history[-1].endswith("active -> active: pinned by the user")
    assert "  - core: true" in services.memory.paths(USER).memory_md.read_text("utf-8")
    budget = services.settings.budget
    assert [c.id for c in core_layer(services.memory.entries(USER), budget)] == [tea.id]

    unpinned = curation.pin(act(services, tea.id, "unpin"), now=T0 + timedelta(minutes=2))
    assert not unpinned.is_core and unpinned.history[-1].endswith("unpinned by the user")
    assert core_layer(services.memory.entries(USER), budget) == []


def test_scope_is_checked_and_fills_layer_one(services: Services, curation: Curation) -> None:
    e = services.memory.remember(USER, "這個專案的部署一律用 docker compose", now=T0)
    scoped = curation.scope(act(services, e.id, "scope", "Project:PCAI"), now=T0)
    assert scoped.scope == "project:PCAI"
    assert scoped.history[-1].endswith("scope global -> project:PCAI by the user")
    cands = scope_layer(
        services.memory.entries(USER), "pcai 要怎麼部署？", services.settings.budget, set()
    )
    assert [c.id for c in cands] == [e.id]
    with pytest.raises(InvalidProposalError):
        curation.scope(act(services, e.id, "scope", "everywhere"), now=T0)
    assert services.memory.entries(USER)[0].scope == "project:PCAI"


def test_edit_supersedes_and_the_chain_records_the_change(
    services: Services, curation: Curation
) -> None:
    old = services.memory.remember(
        USER, "我每天早上喝烏龍茶", now=T0, canonical_topic="drink:morning", user_weight=7
    )
    later = T0 + timedelta(days=3)
    new = curation.revise(act(services, old.id, "revise", "我每天早上改喝黑咖啡"), now=later)
    assert new.supersedes == (old.id,) and new.text == "我每天早上改喝黑咖啡"
    assert new.canonical_topic == "drink:morning" and new.user_weight == 7  # carried over
    entries = services.memory.entries(USER)
    by_id = {e.id: e for e in entries}
    assert by_id[old.id].status == "deprecated"
    assert by_id[old.id].history[-1].endswith(f"edited by the user: replaced by {new.id}")
    assert [e.id for e in chain_of(entries, new.id)] == [old.id, new.id]
    assert [e.id for e in services.governance.archaeology(USER, new.id)] == [old.id, new.id]
    hits = services.memory.search(USER, "早上喝什麼", 10)
    assert new.id in [h.chunk.unit_id for h in hits]
    assert old.id not in [h.chunk.unit_id for h in hits]  # deprecated: not retrieved
    # The old version is no longer the one to edit.
    with pytest.raises(EntryNotLiveError, match=new.id):
        curation.revise(act(services, old.id, "revise", "我早上喝抹茶"), now=later)


def test_edit_goes_through_the_write_guards(services: Services, curation: Curation) -> None:
    e = services.memory.remember(USER, "我家 Wi-Fi 的名稱是 HomeNet", now=T0)
    with pytest.raises(SensitiveDataError):
        curation.revise(act(services, e.id, "revise", "Wi-Fi 密碼是 password: hunter2xyz"), now=T0)
    with pytest.raises(DuplicateMemoryError):
        curation.revise(act(services, e.id, "revise", "我家 Wi-Fi 的名稱是 HomeNet!"), now=T0)
    assert [x.text for x in services.memory.entries(USER)] == [e.text]  # nothing written


def test_keep_refreshes_raises_and_brings_back(services: Services, curation: Curation) -> None:
    old = (T0 - timedelta(days=90)).isoformat(timespec="seconds")
    services.memory.remember(USER, "以前學過一點日文", now=T0)
    [e] = services.memory.entries(USER)
    doc = services.memory.document(USER)
    services.memory.write_document(
        USER, doc.with_entry(replace(e, created_at=old, status="archived", user_weight=7))
    )
    kept = curation.keep(act(services, e.id, "keep"), now=T0)
    assert kept.status == "active" and kept.refreshed_at == T0.isoformat(timespec="seconds")
    assert kept.user_weight == 8  # raised, but never to core
    assert kept.history[-1].endswith("archived -> active: kept by the user")
    again = curation.keep(act(services, e.id, "keep"), now=T0 + timedelta(days=1))
    assert again.user_weight == 8 and again.history[-1].endswith(
        "active -> active: kept by the user"
    )


def test_archived_and_restore(services: Services, curation: Curation) -> None:
    a = services.memory.remember(USER, "去年去過京都旅行", now=T0)
    b = services.memory.remember(USER, "曾經養過一隻倉鼠", now=T0)
    services.governance.set_status(USER, a.id, "archived", now=T0, reason="health 0.1")
    assert [e.id for e in curation.archived(USER)] == [a.id]
    with pytest.raises(EntryNotLiveError, match="restore"):
        curation.pin(act(services, a.id, "pin"), now=T0)
    back = curation.restore(act(services, a.id, "restore"), now=T0 + timedelta(hours=1))
    assert back.status == "active" and back.history[-1].endswith("archived -> active: restored")
    assert curation.archived(USER) == [] and b.id in [e.id for e in services.memory.entries(USER)]
    with pytest.raises(EntryNotFoundError):
        curation.restore(act(services, "m-nope", "restore"), now=T0)


def test_nothing_changes_without_the_users_own_act(services: Services, curation: Curation) -> None:
    e = services.memory.remember(USER, "我對花生過敏", now=T0)
    mint = services.user_acts
    real = mint.act(USER, e.id, "pin", via="button")
    forged = (
        UserAct(USER, e.id, "pin", "button", seal="0" * 64),  # made up by code without a mint
        UserActMint().act(USER, e.id, "pin", via="button"),  # another process's mint
        replace(real, proposal_id="m-other"),  # the user's act on another memory
        replace(mint.act(USER, e.id, "unpin", via="button"), action="pin"),  # unpin -> pin
        replace(mint.act(OTHER, e.id, "pin", via="button"), user_key=USER),  # someone else's
    )
    for fake in forged:
        with pytest.raises(NotTheUsersActError):
            curation.pin(fake, now=T0)
    with pytest.raises(NotTheUsersActError):  # a pin is not a keep, an edit or a restore
        curation.keep(real, now=T0)
    edit = mint.act(USER, e.id, "revise", via="command", text="我對花生和蝦子過敏")
    with pytest.raises(NotTheUsersActError):
        curation.revise(replace(edit, text="我不再對花生過敏"), now=T0)
    scope = mint.act(USER, e.id, "scope", via="command", text="lang:python")
    with pytest.raises(NotTheUsersActError):
        curation.scope(replace(scope, text="global"), now=T0)
    assert services.memory.entries(USER) == [e]


def test_another_users_memory_is_not_found(services: Services, curation: Curation) -> None:
    e = services.memory.remember(OTHER, "Bob 的秘密計畫", now=T0)
    with pytest.raises(EntryNotFoundError):
        curation.pin(act(services, e.id, "pin"), now=T0)
    assert services.memory.entries(OTHER) == [e]
    assert isinstance(e, Entry)
