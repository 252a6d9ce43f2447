"""Each person numbers their own reminders: Bob's first is #1 however many Ann has (issue 30).

Through the terminal chat over the real services: what is shown (the /remind card, /undo's
words, the /reminders list and its commands) and what is typed name the person's own number;
the row id stays inside.
"""

from __future__ import annotations

import io

from agent.reminders import store as rs
from bot.app import Services
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from bot.frontdesk.reminder_desk import reminder_desk_for

ANN, BOB = "cli_ann", "cli_bob"


def chat_of(services: Services, key: str) -> tuple[TerminalChat, io.StringIO]:
    out = io.StringIO()
    return TerminalChat(
        backend_for(services), key, out, reminders=reminder_desk_for(services)
    ), out


async def said_to(chat: TerminalChat, out: io.StringIO, line: str) -> str:
    """What the chat printed for ``line``."""
    mark = len(out.getvalue())
    await chat.handle(line)
    return out.getvalue()[mark:]


def texts(services: Services, key: str, *statuses: str) -> list[str]:
    assert services.reminders is not None
    return [r.text for r in services.reminders.store.of_user(key, statuses)]


async def test_each_person_numbers_their_own_reminders(services: Services) -> None:
    ann, ann_out = chat_of(services, ANN)
    bob, bob_out = chat_of(services, BOB)
    await ann.handle("/remind in 30 minutes call mom")
    await ann.handle("/remind in 2 hours water the plants")
    await bob.handle("/remind in 1 hour feed the cat")
    # Bob's first reminder is his #1 (it was #3: the rows of everyone counted).
    assert "reminder #1 (feed the cat)" in await said_to(bob, bob_out, "/undo")
    await bob.handle("/remind in 1 hour feed the cat")
    listing = await said_to(bob, bob_out, "/reminders")
    assert "#2 " in listing and "/reminders cancel 2" in listing and "✖ Cancel #2" in listing
    assert "#4" not in listing and "cancel 4" not in listing
    assert "Cancelled #2: feed the cat" in await said_to(bob, bob_out, "/reminders cancel 2")
    assert texts(services, ANN, rs.SCHEDULED) == ["call mom", "water the plants"]
    # Ann's typed number is hers: her #1, never a row of Bob's.
    assert "Cancelled #1: call mom" in await said_to(ann, ann_out, "/reminders cancel 1")
    assert texts(services, ANN, rs.SCHEDULED) == ["water the plants"]
    assert "No reminder 3 of yours." in await said_to(ann, ann_out, "/reminders cancel 3")
    assert texts(services, BOB, rs.SCHEDULED) == []
    # /undo names the act by the same number.
    assert "#1" in await said_to(ann, ann_out, "/undo")
    assert texts(services, ANN, rs.SCHEDULED) == ["call mom", "water the plants"]
