"""Promise 1 for reminders: nothing is scheduled without the user's own, sealed act.

The model's ``reminder_create`` tool and every other holder of the reminder service can
propose; only an act the bot layer's mint sealed for *this* reminder and *this* answer
confirms or rejects it. A memory act, a made-up act, another mint's act or a real act bent to
another reminder or answer is refused, and the proposal keeps waiting.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent.reminders import store as rs
from agent.reminders.service import ReminderService
from agent.reminders.store import ReminderStore
from bot.schema import BotStateDB as StateDB
from memory.write.consent import NotTheUsersActError, UserAct, UserActMint

KEY = "telegram_1001"
OTHER = "telegram_1002"


@dataclass(frozen=True)
class DuckAct:
    """What code without the mint can make: something that names the user."""

    user_key: str


def test_code_holding_the_reminder_service_cannot_confirm_without_the_user(
    tmp_path: Path,
) -> None:
    mint = UserActMint()
    state = StateDB(tmp_path / "pcai.db")
    service = ReminderService(
        ReminderStore(state),
        default_zone="Asia/Taipei",
        clock=lambda: datetime.now(UTC),
        acts=mint.check,
    )
    due = datetime.now(UTC) + timedelta(hours=2)
    row = service.propose(KEY, "call mom", due)
    other = service.propose(KEY, "water the plants", due)
    rid = str(row.id)
    real_reject = mint.act(KEY, rid, "reject", via="button", kind="reminder")
    forgeries: tuple[object, ...] = (
        DuckAct(KEY),  # names the user, carries no seal
        UserAct(KEY, rid, "confirm", "button", kind="reminder", seal="0" * 64),  # made up
        UserActMint().act(KEY, rid, "confirm", via="button", kind="reminder"),  # another mint
        mint.act(KEY, rid, "confirm", via="button"),  # the user's act on a *memory* proposal
        replace(mint.act(KEY, rid, "confirm", via="button"), kind="reminder"),
        replace(real_reject, action="confirm"),  # the user's "no" turned into "yes"
        replace(
            mint.act(KEY, str(other.id), "confirm", via="button", kind="reminder"),
            proposal_id=rid,
        ),
        real_reject,  # a reject is not a confirm
    )
    for act in forgeries:
        with pytest.raises(NotTheUsersActError):
            service.confirm(act, KEY, row.id)
    # A sealed act of another user is not this user's answer either.
    with pytest.raises(NotTheUsersActError):
        service.confirm(
            replace(mint.act(OTHER, rid, "confirm", via="button", kind="reminder"), user_key=KEY),
            KEY,
            row.id,
        )
    with pytest.raises(NotTheUsersActError):
        service.reject(DuckAct(KEY), KEY, row.id)
    assert service.store.get(KEY, row.id).status == rs.PROPOSED

    confirmed = service.confirm(
        mint.act(KEY, rid, "confirm", via="button", kind="reminder"), KEY, row.id
    )
    assert confirmed.status == rs.SCHEDULED
    state.close()


def test_a_reminder_act_never_answers_a_memory_proposal() -> None:
    mint = UserActMint()
    act = mint.act(KEY, "p-1", "confirm", via="button", kind="reminder")
    with pytest.raises(NotTheUsersActError):
        mint.check.verify(act, ("confirm",))  # the memory write path's check
    assert mint.check.verify(act, ("confirm",), kind="reminder") is act
