"""Promises 7 and 8: one bad file or user never stops anyone else; every crash window heals.

Attacks: a Latin-1 byte in one user's MEMORY.md (their turns and everyone's jobs must go on,
and they are told once what to fix), a garbage or truncated ``pcai.db`` (the bot must still
start and answer), and a crash between writing a confirmed memory and marking its proposal
(the expiry job must not report "not saved" for a memory that is in MEMORY.md).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from agent.ollama_client import OllamaChat
from agent.prompt import carried_memories
from agent.types import IncomingMessage
from bot.app import Services, build_agent, build_services
from bot.chat import TerminalChat
from bot.doctor import run_doctor
from bot.frontdesk.backend import backend_for
from bot.jobs import (
    JobRunner,
    default_jobs,
    idle_summaries_job,
    index_job,
    lifecycle_job,
    pending_expiry_job,
)
from bot.settings import Settings
from history.sessions import Session
from memory.index.embedders import E5Embedder
from memory.write.proposals import CONFIRMED, EXPIRED, PENDING
from tests.bot.conftest import OWNER, make_harness
from tests.fakes.ollama_server import FakeOllama

ALICE, BOB = "telegram_101", "telegram_202"  # Alice's MEMORY.md gets the bad byte
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
BAD = b"\n- caf\xe9 au lait, typed in a Latin-1 editor\n"


class Told:
    """A notifier that records what each user was told outside a reply."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    async def __call__(self, user_key: str, text: str) -> None:
        self.messages.append((user_key, text))

    def to(self, user_key: str) -> list[str]:
        """Everything ``user_key`` was told, in order."""
        return [text for who, text in self.messages if who == user_key]


def _break_memory_md(services: Services, user_key: str) -> int:
    """Append a Latin-1 byte to ``user_key``'s MEMORY.md; returns its byte offset."""
    md = services.memory.paths(user_key).memory_md
    raw = md.read_bytes()
    md.write_bytes(raw + BAD)
    return len(raw) + BAD.index(b"\xe9")


def _problem_notices(texts: list[str]) -> list[str]:
    return [t for t in texts if "MEMORY.md" in t and "UTF-8" in t]


@pytest.fixture
def chat(services: Services, fake_ollama: FakeOllama) -> Iterator[Services]:
    """The services with an agent whose model is the fake Ollama."""
    s = services.settings
    build_agent(services, OllamaChat(fake_ollama.url, s.chat_model, timeout=10))
    yield services


def _memory_block(fake: FakeOllama) -> str:
    return carried_memories(fake.chat_requests[-1]["messages"])


# -- promise 7: a bad file ---------------------------------------------------------------
async def test_a_latin1_byte_in_one_memory_md_leaves_every_turn_answered(
    chat: Services, fake_ollama: FakeOllama
) -> None:
    chat.memory.remember(ALICE, "Alice drinks oolong tea every morning", user_weight=9)
    chat.memory.remember(BOB, "Bob drinks espresso after lunch", user_weight=9)
    offset = _break_memory_md(chat, ALICE)
    agent = chat.agent
    assert agent is not None
    when = datetime.now(UTC)

    fake_ollama.queue_chat("Here is my answer for Alice.")
    first = await agent.respond(IncomingMessage(ALICE, "what do I drink?", when))
    assert first.text == "Here is my answer for Alice." and not first.error
    [notice] = _problem_notices(list(first.notices))
    assert f"byte {offset}" in notice and "fix or remove" in notice
    assert "oolong" not in _memory_block(fake_ollama)

    fake_ollama.queue_chat("Second answer for Alice.")
    second = await agent.respond(IncomingMessage(ALICE, "and later?", when + timedelta(1)))
    assert second.text == "Second answer for Alice." and not second.error
    assert _problem_notices(list(second.notices)) == []  # told once, not every turn

    fake_ollama.queue_chat("Bob, you drink espresso.")
    bob = await agent.respond(IncomingMessage(BOB, "what do I drink?", when))
    assert bob.text == "Bob, you drink espresso." and not bob.error and not bob.notices
    assert "Bob drinks espresso after lunch" in _memory_block(fake_ollama)

    # The jobs know the turn told Alice already: nobody tells her a second time.
    told = Told()
    await index_job(chat, T0, notifier=told)
    assert told.messages == []
    assert chat.memory.paths(ALICE).memory_md.read_bytes().endswith(BAD)  # never rewritten


async def test_every_job_still_processes_the_other_user_and_tells_the_bad_one_once(
    services: Services,
) -> None:
    old = T0 - timedelta(days=200)  # health ~0.13 by now: the lifecycle archives it
    services.memory.remember(ALICE, "Alice's old note about a bike lock", now=old)
    bob_old = services.memory.remember(BOB, "Bob's old note about a bike lock", now=old)
    services.lifecycle.told(BOB, [bob_old.id], T0 - timedelta(days=8))  # the week's notice
    offset = _break_memory_md(services, ALICE)
    for user in (ALICE, BOB):
        services.daily_log.append_user_message(user, f"{user} asks about solar panels", T0)
        session = Session(user)
        session.append("user", f"{user} compares heat pumps and gas boilers", T0)
        session.append("assistant", "Heat pumps use about a third of the energy.", T0)
        services.sessions.save(session)
        services.pending.add(user, f"{user} prefers heat pumps", now=T0)

    told = Told()
    later = T0 + timedelta(hours=2)
    for _ in range(2):  # two ticks of every job
        for spec in default_jobs(told):
            status = await JobRunner(services, now=lambda: later).run(spec)
            assert status is not None and status.ok, status

    # Bob: his log line indexed, his lifecycle run, his idle summary, his expiry notice.
    assert "memory/2026-03-01.md" in services.store.indexed_paths(BOB)
    assert services.memory.document(BOB).by_id()[bob_old.id].status == "archived"
    assert services.memory.paths(BOB).auto_summaries_md.exists()
    assert [t for t in told.to(BOB) if "not saved" in t] and not _problem_notices(told.to(BOB))
    # Alice: told exactly once, what to fix, across two runs of four jobs.
    [notice] = _problem_notices(told.to(ALICE))
    assert f"byte {offset}" in notice
    assert services.memory.paths(ALICE).memory_md.read_bytes().endswith(BAD)
    # Her proposal is not declared "not saved" while her file cannot be checked.
    assert [p.status for p in services.pending.pending(ALICE)] == [PENDING]

    # Once she fixes the byte, the jobs take her up again (and her proposal expires).
    md = services.memory.paths(ALICE).memory_md
    md.write_bytes(md.read_bytes().replace(b"\xe9", b"e"))
    assert "skipped" not in await index_job(services, later, notifier=told)
    assert {"MEMORY.md", "memory/2026-03-01.md"} <= services.store.indexed_paths(ALICE)
    assert "1 status changes" in await lifecycle_job(services, later, notifier=told)
    await pending_expiry_job(told)(services, later)
    assert [t for t in told.to(ALICE) if "not saved" in t]
    assert len(_problem_notices(told.to(ALICE))) == 1


async def test_a_bad_file_is_told_again_only_when_it_changes(services: Services) -> None:
    services.memory.remember(ALICE, "Alice keeps her passport in the blue drawer")
    _break_memory_md(services, ALICE)
    told = Told()
    await lifecycle_job(services, T0, notifier=told)
    await lifecycle_job(services, T0, notifier=told)
    assert len(_problem_notices(told.to(ALICE))) == 1
    md = services.memory.paths(ALICE).memory_md
    md.write_bytes(md.read_bytes() + b"\xff more\n")  # a different problem: a new notice
    await idle_summaries_job(services, T0, notifier=told)
    await lifecycle_job(services, T0, notifier=told)
    assert len(_problem_notices(told.to(ALICE))) == 2


async def test_a_memory_md_that_cannot_be_opened_skips_only_its_owner(
    services: Services,
) -> None:
    services.memory.paths(ALICE).memory_md.mkdir(parents=True)  # a folder where a file belongs
    services.daily_log.append_user_message(BOB, "Bob asks about rain barrels", T0)
    told = Told()
    detail = await index_job(services, T0, notifier=told)
    assert f"1 skipped (unreadable file: {ALICE})" in detail
    assert "memory/2026-03-01.md" in services.store.indexed_paths(BOB)
    [notice] = told.to(ALICE)
    assert "cannot read your MEMORY.md" in notice


async def test_commands_and_buttons_over_the_bad_file_say_what_to_fix(
    services: Services,
) -> None:
    owner = f"telegram_{OWNER}"
    services.memory.remember(owner, "Owner's bike is a green Brompton")
    services.memory.remember("cli_ann", "Ann's bike is a red Bianchi")
    tg = await make_harness(services)
    try:
        await tg.send(OWNER, "/remember Owner's helmet is in the hallway cupboard")
        markup = tg.last_markup()["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        shown = tg.api.next_id
        offset = _break_memory_md(services, owner)
        await tg.send(OWNER, "/memory")
        assert f"byte {offset}" in tg.api.texts()[-1] and "MEMORY.md" in tg.api.texts()[-1]
        await tg.press(OWNER, markup, shown)  # Confirm: the write needs the unreadable file
        [alert] = [c["text"] for c in tg.api.named("answerCallbackQuery")]
        assert str(offset) in alert and "UTF-8" in alert
    finally:
        await tg.app.shutdown()

    out = io.StringIO()
    ann_offset = _break_memory_md(services, "cli_ann")
    chat = TerminalChat(backend_for(services), "cli_ann", out)
    assert await chat.handle("/memory")  # the terminal chat goes on
    assert f"byte {ann_offset}" in out.getvalue()


# -- promise 7: a damaged pcai.db --------------------------------------------------------
async def test_a_garbage_pcai_db_is_set_aside_and_the_bot_still_answers(
    settings: Settings, embedder: E5Embedder, fake_ollama: FakeOllama, caplog
) -> None:  # type: ignore[no-untyped-def]
    garbage = b"\x00this is not an SQLite database\xff" * 300
    settings.data_dir.mkdir(parents=True)
    settings.state_db_path.write_bytes(garbage)
    caplog.set_level(logging.WARNING)

    services = build_services(settings, embedder=embedder)  # today: DatabaseError, no start
    try:
        agent = build_agent(services, OllamaChat(fake_ollama.url, settings.chat_model))
        fake_ollama.queue_chat("Still here.")
        reply = await agent.respond(IncomingMessage(BOB, "hello?", datetime.now(UTC)))
        assert reply.text == "Still here." and not reply.error
        services.pending.add(BOB, "Bob's new proposal after the rebuild", now=T0)
        assert [p.text for p in services.pending.pending(BOB)] == [
            "Bob's new proposal after the rebuild"
        ]
    finally:
        services.close()

    [aside] = settings.data_dir.glob("pcai.db.corrupt-*")
    assert aside.read_bytes() == garbage
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("pcai.db" in w and "pending proposals" in w for w in warned), warned
    lines: list[str] = []
    run_doctor(settings, lines.append)
    assert any("set aside" in line and aside.name in line for line in lines), lines


async def test_a_truncated_pcai_db_is_rebuilt_and_its_owners_told_of_lost_proposals(
    settings: Settings, embedder: E5Embedder
) -> None:
    first = build_services(settings, embedder=embedder)
    first.pending.add(ALICE, "Alice's dentist is Dr. Chen on Main Street", now=T0)
    for i in range(400):  # enough rows that the tail of the file holds other tables' pages
        first.access.bump(BOB, [f"m-{i:04d}-{'x' * 60}"], T0)
    first.close()
    path = settings.state_db_path
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])  # a disk that filled up mid-write

    services = build_services(settings, embedder=embedder)
    try:
        assert services.pending.pending(ALICE) == []  # rebuilt empty
        told = Told()
        await pending_expiry_job(told)(services, T0 + timedelta(minutes=1))
        [lost] = told.to(ALICE)
        assert "Dr. Chen" in lost and "lost" in lost
        assert told.to(BOB) == []  # Bob had no proposal waiting: nothing to tell him
        await pending_expiry_job(told)(services, T0 + timedelta(minutes=2))
        assert len(told.to(ALICE)) == 1  # told once
    finally:
        services.close()
    assert len(list(settings.data_dir.glob("pcai.db.corrupt-*"))) == 1

    restarted = build_services(settings, embedder=embedder)  # the copy is still on disk
    try:
        await pending_expiry_job(told)(restarted, T0 + timedelta(minutes=3))
        assert len(told.to(ALICE)) == 1  # ... but its owners were told already
    finally:
        restarted.close()


# -- promise 8: the crash window between MEMORY.md and the pending row ------------------
class Crash(Exception):
    """The process dies here."""


def _crash_after_the_markdown_write(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """Confirm a proposal through the real write path, dying before the row is marked."""
    proposal = services.confirm.propose(ALICE, "Alice's locker code is on a yellow note", now=T0)

    def die(*args: object, **kwargs: object) -> bool:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(services.pending, "resolve", die)
        with pytest.raises(Crash):
            services.confirm.confirm(
                services.user_acts.act(ALICE, proposal.id, "confirm", via="button"),
                now=T0 + timedelta(minutes=1),
            )
    [entry] = services.memory.entries(ALICE)
    assert services.pending.get(ALICE, proposal.id).status == PENDING
    return proposal.id, entry.id


async def test_a_restart_after_the_crash_marks_the_written_proposal_confirmed(
    settings: Settings, embedder: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = build_services(settings, embedder=embedder)
    proposal_id, entry_id = _crash_after_the_markdown_write(first, monkeypatch)
    first.close()

    again = build_services(settings, embedder=embedder)  # the restart
    try:
        healed = again.pending.get(ALICE, proposal_id)
        assert healed.status == CONFIRMED and healed.entry_id == entry_id
        told = Told()
        await pending_expiry_job(told)(again, T0 + timedelta(hours=1))
        assert told.messages == []
    finally:
        again.close()


async def test_the_expiry_job_never_reports_a_written_memory_as_not_saved(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    proposal_id, entry_id = _crash_after_the_markdown_write(services, monkeypatch)
    other = services.pending.add(ALICE, "Alice's spare key is under the mat", now=T0)
    told = Told()
    detail = await pending_expiry_job(told)(services, T0 + timedelta(hours=1))
    assert detail.startswith("1 proposals expired")
    assert [text for text in told.to(ALICE)] == [told.to(ALICE)[0]]
    assert "spare key" in told.to(ALICE)[0] and "locker" not in told.to(ALICE)[0]
    healed = services.pending.get(ALICE, proposal_id)
    assert healed.status == CONFIRMED and healed.entry_id == entry_id
    assert services.pending.get(ALICE, other.id).status == EXPIRED


async def test_an_expiry_notice_survives_a_crash_before_it_was_sent(
    settings: Settings, embedder: E5Embedder
) -> None:
    class Died(BaseException):
        """The process dies while sending."""

    async def dying(user_key: str, text: str) -> None:
        raise Died

    first = build_services(settings, embedder=embedder)
    first.pending.add(BOB, "Bob's gym locker is number 42", now=T0)
    with pytest.raises(Died):
        await pending_expiry_job(dying)(first, T0 + timedelta(minutes=31))
    first.close()

    again = build_services(settings, embedder=embedder)
    try:
        told = Told()
        await pending_expiry_job(told)(again, T0 + timedelta(minutes=32))
        [notice] = told.to(BOB)
        assert "locker is number 42" in notice and "not saved" in notice
        await pending_expiry_job(told)(again, T0 + timedelta(minutes=33))
        assert len(told.to(BOB)) == 1
    finally:
        again.close()
