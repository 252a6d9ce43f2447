"""Reminders on the memory page: the list, Done, Snooze and Delete, each the chat's own act."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent.reminders import store as rs
from agent.reminders.store import Reminder
from tests.web.conftest import Page, csrf_of

ALICE, BOB = "telegram_111", "telegram_222"


async def set_reminders(page: Page) -> tuple[Reminder, Reminder]:
    """Alice's reminder still to come, and one that just rang (sent by the real service)."""
    service = page.services.reminders
    assert service is not None
    now = datetime.now(UTC)
    store = service.store
    coming = store.add(
        ALICE, "call mom", due=now + timedelta(days=1), zone="Asia/Taipei", now=now,
        status=rs.SCHEDULED, source="/remind",
    )  # fmt: skip
    rang = store.add(
        ALICE, "take the pills", due=now - timedelta(seconds=30), zone="Asia/Taipei", now=now,
        status=rs.SCHEDULED, source="/remind",
    )  # fmt: skip

    async def send(row: Reminder, text: str) -> str:
        return "m-1"

    service.sender = send
    assert (await service.fire(rang.id)) is not None
    assert store.get(ALICE, rang.id).status == rs.SENT
    return coming, rang


async def test_the_page_lists_reminders_and_acts_on_them_as_the_chat_does(page: Page) -> None:
    coming, rang = await set_reminders(page)
    service = page.services.reminders
    assert service is not None
    client = page.login(ALICE)
    html = client.get("/reminders").text
    assert html.index("Rang this week") < html.index("take the pills")
    assert html.index("Coming up") < html.index("call mom")
    assert "(Asia/Taipei)" in html
    token = csrf_of(html)

    r = client.post(f"/reminders/{rang.id}", data={"csrf": token, "act": "1h"})
    moved = service.store.get(ALICE, rang.id)
    assert moved.status == rs.SCHEDULED
    assert abs(moved.due - datetime.now(UTC) - timedelta(hours=1)) < timedelta(minutes=1)
    assert "take the pills" in r.text  # the chat's sentence, as a flash
    # the page's Undo names the act it would take back, and takes it back
    assert f"↩️ Undo the snooze of reminder #{rang.id}</button>" in r.text
    r = client.post("/undo", data={"csrf": token, "back": "/reminders"})
    assert service.store.get(ALICE, rang.id).status == rs.SENT and "Rang this week" in r.text

    client.post(f"/reminders/{rang.id}", data={"csrf": token, "act": "done"})
    assert service.store.get(ALICE, rang.id).status == rs.DONE
    client.post(f"/reminders/{coming.id}", data={"csrf": token, "act": "delete"})
    assert service.store.get(ALICE, coming.id).status == rs.CANCELLED
    assert "No reminders." in client.get("/reminders").text


async def test_nobody_sees_or_moves_anothers_reminders(page: Page) -> None:
    coming, _ = await set_reminders(page)
    service = page.services.reminders
    assert service is not None
    bob = page.login(BOB)
    html = bob.get("/reminders").text
    assert 'class="reminder' not in html and "take the pills" not in html
    r = bob.post(f"/reminders/{coming.id}", data={"csrf": csrf_of(html), "act": "delete"})
    assert r.status_code == 200 and 'class="reminder' not in r.text
    assert service.store.get(ALICE, coming.id).status == rs.SCHEDULED
    bad = bob.post("/reminders/x1", data={"csrf": csrf_of(html), "act": "delete"})
    assert bad.status_code == 404
