"""The per-user update queues (bot/telegram/queues.py): order, fairness, floods, the stop.

Updates are fed the way python-telegram-bot's fetcher feeds them: one task per update calling
the processor's ``process_update`` with the Application's own handling coroutine.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable
from typing import Any

from telegram import Update

from bot.app import Services
from bot.telegram.open_turns import OpenTurns
from bot.telegram.queues import FLOOD_LIMIT, MERGE_MAX_CHARS, UserQueues
from tests.bot.conftest import FRIEND, OWNER, STRANGER, Harness

ALLOWED = frozenset({OWNER, FRIEND})


def _update(update_id: int, user: int, text: str = "x") -> Update:
    return Update.de_json(
        {
            "update_id": update_id,
            "message": {
                "message_id": update_id,
                "date": int(time.time()),
                "chat": {"id": user, "type": "private"},
                "from": {"id": user, "is_bot": False, "first_name": "u", "language_code": "en"},
                "text": text,
            },
        },
        None,
    )


def _feed(processor: UserQueues, update: Update, work: Awaitable[Any]) -> asyncio.Task[None]:
    """What PTB's update fetcher does with each update it takes from its queue."""
    return asyncio.create_task(processor.process_update(update, work))


async def _idle(processor: UserQueues, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while processor._queues and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert not processor._queues, "the queues did not drain"


async def test_one_user_in_order_users_side_by_side() -> None:
    processor = UserQueues()
    events: list[str] = []

    async def work(name: str, delay: float) -> None:
        events.append(f"start {name}")
        await asyncio.sleep(delay)
        events.append(f"end {name}")

    _feed(processor, _update(1, 1), work("a1", 0.05))
    _feed(processor, _update(2, 1), work("a2", 0.0))
    _feed(processor, _update(3, 2), work("b1", 0.0))
    await asyncio.sleep(0)
    await _idle(processor)
    assert events.index("end a1") < events.index("start a2")  # same user: in order
    assert events.index("end b1") < events.index("end a1")  # other user: not kept waiting
    assert processor._queues == {}  # idle users are dropped (strangers never grow it)


async def test_a_flood_is_merged_and_another_user_is_answered_first(tg: Harness) -> None:
    """300 messages from one user: nothing of them is lost, they cost a bounded number of
    model calls, and a friend who writes after the flood is answered before it is worked off.
    (On the old shared pool of 256 slots the friend waited behind ~250 of the owner's turns.)
    """
    assert tg.model is not None
    tg.model.delay = 0.01
    tg.model.chat_handler = lambda body: "reply to: " + body["messages"][-1]["content"][:20]
    processor: UserQueues = tg.app.update_processor  # type: ignore[assignment]
    flood = [f"flood message {n}" for n in range(300)]
    tasks = [
        _feed(processor, u, tg.app.process_update(u))
        for u in (tg.updates.message(tg.app.bot, OWNER, text, lang="en") for text in flood)
    ]
    friend = tg.updates.message(tg.app.bot, FRIEND, "hello from the friend", lang="en")
    tasks.append(_feed(processor, friend, tg.app.process_update(friend)))
    await asyncio.gather(*tasks)
    await _idle(processor, 120)

    replies = [(p["chat_id"], p["text"]) for p in tg.api.named("sendMessage")]
    owner_replies = [i for i, (chat, _) in enumerate(replies) if chat == OWNER]
    [friend_reply] = [i for i, (chat, _) in enumerate(replies) if chat == FRIEND]
    assert friend_reply < owner_replies[2]  # not behind the flood
    asked = tg.asked()
    owner_asked = [a for a in asked if "flood message" in a]
    assert len(owner_asked) <= FLOOD_LIMIT + 2  # bounded: the rest were merged
    every_word = "\n".join(owner_asked)
    assert all(f"flood message {n}\n" in every_word + "\n" for n in range(300))  # none lost
    order = [int(n) for n in re.findall(r"flood message (\d+)", every_word)]
    assert order == sorted(order)  # and in the order they were sent
    assert OpenTurns(tg.services.state).left() == []  # every one handled


async def test_a_flood_of_commands_is_refused_in_one_sentence(tg: Harness) -> None:
    assert tg.model is not None
    tg.model.delay = 0.05
    processor: UserQueues = tg.app.update_processor  # type: ignore[assignment]
    updates = [tg.updates.message(tg.app.bot, OWNER, "/stats", lang="en") for _ in range(40)]
    await asyncio.gather(*(_feed(processor, u, tg.app.process_update(u)) for u in updates))
    await _idle(processor, 120)
    said = [t for t in tg.api.texts() if "many messages at once" in t]
    assert len(said) == 1  # one sentence per flood, not one per skipped command
    stats_answers = [t for t in tg.api.texts() if "many messages at once" not in t]
    assert FLOOD_LIMIT <= len(stats_answers) <= FLOOD_LIMIT + 2


async def test_the_stop_cuts_a_stuck_turn_and_keeps_what_waits(services: Services) -> None:
    turns = OpenTurns(services.state)
    processor = UserQueues(turns, grace=0.2, allowed=ALLOWED)
    started: list[str] = []
    release = asyncio.Event()

    async def stuck() -> None:
        started.append("stuck")
        await release.wait()  # a model that never answers

    async def later() -> None:
        started.append("later")

    _feed(processor, _update(11, OWNER, "first"), stuck())
    _feed(processor, _update(12, OWNER, "second"), later())
    await asyncio.sleep(0.05)
    began = time.monotonic()
    await processor.stop()
    assert time.monotonic() - began < 2.0
    assert started == ["stuck"]  # the waiting one never ran
    assert [t.update_id for t in turns.left()] == [11, 12]  # both stay for the next process
    _feed(processor, _update(13, FRIEND), later())  # nothing new starts once stopping
    await asyncio.sleep(0.05)
    assert started == ["stuck"]


async def test_a_secret_in_a_message_is_masked_before_it_is_kept(services: Services) -> None:
    turns = OpenTurns(services.state)
    processor = UserQueues(turns, allowed=ALLOWED)
    done = asyncio.Event()  # each message's turn waits for it
    _feed(processor, _update(21, OWNER, "my password is hunter22, remember it"), done.wait())
    await asyncio.sleep(0.05)
    [kept] = turns.left()
    text = json.dumps(kept.payload, ensure_ascii=False)
    assert "hunter22" not in text and "remember it" in text
    done.set()
    await _idle(processor)
    assert turns.left() == []  # handled: the row is gone


async def test_a_replayed_update_is_not_run_again_when_telegram_delivers_it() -> None:
    processor = UserQueues()
    ran: list[int] = []

    async def work(n: int) -> None:
        ran.append(n)

    _feed(processor, _update(31, OWNER), work(1))
    await asyncio.sleep(0.01)
    _feed(processor, _update(31, OWNER), work(2))  # the same update id again
    await asyncio.sleep(0.01)
    await _idle(processor)
    assert ran == [1]


async def test_a_strangers_message_is_never_written(services: Services) -> None:
    turns = OpenTurns(services.state)
    processor = UserQueues(turns, allowed=ALLOWED)
    done = asyncio.Event()  # each message's turn waits for it
    _feed(processor, _update(41, STRANGER, "hello, my card is 4111 1111 1111 1111"), done.wait())
    _feed(processor, _update(42, OWNER, "hello"), done.wait())
    await asyncio.sleep(0.05)
    assert [t.update_id for t in turns.left()] == [42]  # while both are in hand
    done.set()
    await _idle(processor)


async def test_a_flood_of_long_messages_is_bounded_in_turns_and_size(tg: Harness) -> None:
    assert tg.model is not None
    tg.model.delay = 0.05
    processor: UserQueues = tg.app.update_processor  # type: ignore[assignment]
    updates = [
        tg.updates.message(tg.app.bot, OWNER, f"{n:03d} " + "a long line. " * 76, lang="en")
        for n in range(16)
    ]  # 16 messages of 992 characters: the sixth turn fills up, the last ones are skipped
    await asyncio.gather(*(_feed(processor, u, tg.app.process_update(u)) for u in updates))
    await _idle(processor, 120)
    asked = tg.asked()
    assert len(asked) <= FLOOD_LIMIT + 1
    assert all(len(a) <= MERGE_MAX_CHARS + 100 for a in asked)
    assert len([t for t in tg.api.texts() if "many messages at once" in t]) == 1


async def test_a_row_that_cannot_be_read_back_never_stops_the_start(tg: Harness) -> None:
    turns = OpenTurns(tg.services.state)
    turns.opened(51, f"telegram_{OWNER}", OWNER, time.time(), {"update_id": 51, "message": 7})
    processor: UserQueues = tg.app.update_processor  # type: ignore[assignment]
    assert await processor.replay() == 1  # handled: dropped with a log line, not raised
    assert turns.left() == []
