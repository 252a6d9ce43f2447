"""Promise 9, "each user sees only their own": no listing of user A shows anything of user B.

User B has memories, a waiting proposal, a conversation the idle job summarised, and every job
has run over both users. User A then runs every command that lists or reports something,
including ones naming B's ids; nothing A gets back names B's key, id, entries or words.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.app import Services
from bot.frontdesk.backend import backend_for
from bot.frontdesk.desk import Desk
from bot.jobs import JobRunner, default_jobs

ALICE, BOB = "telegram_1001", "telegram_987654"
BOB_WORD = "xanthoria"  # distinctive text of Bob's


async def test_no_listing_of_one_user_shows_another(services: Services) -> None:
    backend = backend_for(services)
    runner = JobRunner(services, tz=services.tz)
    backend.job_status = runner.summary
    desk = Desk(backend)
    now = datetime.now().astimezone()
    services.memory.remember(ALICE, "I prefer green tea in the morning", section="偏好")
    bob_entry = services.memory.remember(
        BOB, f"My {BOB_WORD} lichen collection lives on the balcony", canonical_topic="lichen"
    )
    bob_pending = backend.propose(BOB, f"Water the {BOB_WORD} every Sunday", now)
    async with services.sessions.locked(BOB) as session:
        session.append("user", f"I found a new {BOB_WORD} today", now - timedelta(hours=2))
        session.append("assistant", "Nice find!", now - timedelta(hours=2))
    for spec in default_jobs():
        await runner.run(spec)
    assert services.memory.paths(BOB).auto_summaries_md.exists()  # the idle job saw Bob

    bob_things = (BOB, BOB.split("_")[1], bob_entry.id, bob_pending.proposal_id, BOB_WORD)
    asked = [
        ("stats", ""),
        ("memory", ""),
        ("pending", ""),
        ("why", ""),
        ("export", ""),
        ("search", BOB_WORD),
        ("search", "lichen balcony"),
        ("history", "lichen"),
        ("history", bob_entry.id),
        ("forget", bob_entry.id),
        ("confirm", bob_pending.proposal_id),
        ("discard", bob_pending.proposal_id),
        ("undo", ""),
    ]
    for name, arg in asked:
        answer = await desk.command(ALICE, name, arg, "en")
        shown = answer.text + (answer.document.content if answer.document else "")
        shown += "".join(p.text + p.proposal_id for p in answer.proposals)
        # Echoing back what Alice typed tells her nothing; anything else of Bob's would.
        leaked = [thing for thing in bob_things if thing in shown.replace(arg, "")]
        assert leaked == [], f"/{name} {arg} showed Alice {leaked}: {shown!r}"
    # Bob's things are untouched by Alice's tries.
    assert [e.id for e in services.memory.entries(BOB)] == [bob_entry.id]
    assert [p.proposal_id for p in backend.pending(BOB)] == [bob_pending.proposal_id]


async def test_stats_count_only_the_askers_own_data(services: Services) -> None:
    backend = backend_for(services)
    services.memory.remember(ALICE, "I prefer green tea in the morning")
    for i in range(3):
        services.memory.remember(BOB, f"Bob's note number {i} about {BOB_WORD}")
    alone = dict(backend.stats(ALICE))
    for i in range(30):
        services.memory.remember(BOB, f"Another note {i} of Bob's about {BOB_WORD} lichens")

    # What Alice sees of the index does not move when Bob's grows.
    assert dict(backend.stats(ALICE)) == alone
