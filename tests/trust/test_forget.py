"""Promise 3, "forget means forget": after /forget no search, export or grep finds a copy.

Each test is an attack on the promise. The memory is made the way a person makes one: said in
the chat (daily log, session), proposed by the model, confirmed by the user, recalled in a later
turn (the /why record), quoted by the model's replies and by the summaries made while idle and
by /new (auto_summaries.md, MEMORY_FULL.md, the log's summary line), noted in the short-term
table. Then the user says /forget. Every copy goes (history/redact.py says what a copy is);
the user's own question about the stew, which is not one, stays as it was; /undo brings all of
it back.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.ollama_client import OllamaEmbedder
from agent.pipeline import Agent
from agent.prompt import carried_memories
from agent.types import IncomingMessage
from bot.app import Services, build_agent, build_services
from bot.cli import cmd_export
from bot.frontdesk.backend import ServicesBackend, backend_for
from bot.frontdesk.desk import Desk
from bot.jobs import JobRunner, default_jobs
from bot.settings import load_settings
from memory.state.short_term import ShortTermStore
from tests.fakes.chat_requests import instruction_of, summarised_lines
from tests.fakes.ollama_server import FakeOllama, tool_reply

USER = "telegram_4242"
WORD = "quincewort"  # the distinctive text of the memory that is forgotten
HANZI = "榅桲草"  # and its Chinese name
SAID = f"Please remember: my grandmother's stew uses {WORD} ({HANZI}) and smoked paprika."
ENTRY = f"Grandmother's stew uses {WORD} ({HANZI}) and smoked paprika"
KEPT = "I prefer green tea in the morning"
QUESTION = f"What goes into grandma's stew? The {WORD} one."  # about it, not a copy of it
COPY = "smoked paprika"  # in every copy of the memory, in nothing else


def model(body: dict[str, Any]) -> str:
    """The model: summaries that repeat the memory in other words, and short chat answers."""
    system = instruction_of(body)
    transcript = "\n".join(summarised_lines(body))
    if system.startswith("Summarise") and WORD not in transcript:
        return "Small talk.\nKeywords: chat, tea, morning"  # it knows only what it is shown
    if system.startswith("Summarise this stretch"):
        return f"The user's grandmother's stew uses {WORD} and smoked paprika.\nKeywords: stew"
    if system.startswith("Summarise this conversation"):
        return f"- **主題：** 奶奶的燉菜\n- **重點：** {ENTRY}"
    if system.startswith("Summarise the message"):
        return "Goal: -\nDecision: -\nTodo: -\nFacts: -"
    return "Noted."


@dataclass
class Scene:
    """A user who told the bot about the stew and confirmed it as a memory."""

    services: Services
    agent: Agent
    fake: FakeOllama
    backend: ServicesBackend
    desk: Desk
    entry_id: str
    clock: datetime

    def msg(self, text: str, message_id: str) -> IncomingMessage:
        """A message from USER a minute after the previous one."""
        self.clock += timedelta(minutes=1)
        return IncomingMessage(USER, text, self.clock, message_id=message_id, language="en")

    async def say(self, command: str, arg: str = "") -> str:
        """Run one slash command as USER and return the text the bot answers."""
        answer = await self.desk.command(USER, command, arg, "en")
        return answer.text + (answer.document.content if answer.document else "")

    def memory_block(self) -> str:
        """The memory block of the last chat request ("" when it had none)."""
        return carried_memories(self.fake.chat_requests[-1]["messages"])


@pytest.fixture
def services(tmp_path: Path, fake_ollama: FakeOllama) -> Iterator[Services]:
    """Real services on a tmp data folder, the fake Ollama for chat and embeddings."""
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "OLLAMA_HOST": fake_ollama.url,
            "PCAI_EMBEDDER": "ollama",
            "PCAI_PENDING_TTL_MINUTES": "600",  # the scene starts three hours ago
        }
    )
    embedder = OllamaEmbedder(fake_ollama.url, settings.embed_model, dim=fake_ollama.dim)
    built = build_services(settings, embedder=embedder)
    built.memory.ensure_index()
    yield built
    built.close()


@pytest.fixture
async def scene(services: Services, fake_ollama: FakeOllama) -> AsyncIterator[Scene]:
    """The stew memory everywhere it naturally ends up, and one other memory kept."""
    agent = build_agent(services)
    backend = backend_for(services)
    start = datetime.now().astimezone().replace(microsecond=0) - timedelta(hours=3)
    s = Scene(services, agent, fake_ollama, backend, Desk(backend), "", start)
    services.memory.remember(USER, KEPT)

    fake_ollama.queue_chat(
        tool_reply("memory_save", text=ENTRY), "I'll remember it once you OK it."
    )
    reply = await agent.respond(s.msg(SAID, "501"))
    outcome = backend.decide(USER, reply.proposals[0].proposal_id, "confirm", via="button")
    assert outcome.status == "confirmed"
    s.entry_id = outcome.entry_id

    fake_ollama.chat_handler = model
    fake_ollama.queue_chat(f"Your {ENTRY.lower()}.")
    await agent.respond(s.msg(QUESTION, "502"))
    assert WORD in s.memory_block()  # recalled: the /why record holds it now
    await services.idle.run(s.clock + timedelta(hours=2))
    await agent.new_session(USER, s.clock)
    fake_ollama.queue_chat(f"As you said: {ENTRY}!")
    await agent.respond(s.msg("Tell me about the stew again", "503"))
    ShortTermStore(services.state).add(USER, "calendar", f"Note: {ENTRY}", s.clock)
    services.memory.reindex(USER)

    # The attack is real: before /forget the text is in every one of these places.
    holders = {p.name for p in holding(services, WORD)}
    assert {"MEMORY.md", "auto_summaries.md", "MEMORY_FULL.md", f"{USER}.json"} <= holders
    assert any(p.parent.name == "memory" for p in holding(services, WORD))  # the daily log
    assert holding_db(services, WORD)
    yield s


def user_files(services: Services) -> list[Path]:
    """Every file of the user: their folder and their session."""
    data = services.settings.data_dir
    mine = [p for p in (data / "users" / USER).rglob("*") if p.is_file()]
    return mine + [p for p in (data / "history").glob(f"{USER}*") if p.is_file()]


def db_files(services: Services) -> list[Path]:
    """pcai.db and the search index, with their WAL files."""
    out = []
    for db in (services.settings.state_db_path, services.settings.index_path):
        out += [p for p in db.parent.glob(db.name + "*") if p.is_file()]
    return out


def holding(services: Services, needle: str) -> list[Path]:
    """The user's files whose bytes contain ``needle`` (any case)."""
    return [p for p in user_files(services) if _has(p, needle)]


def holding_db(services: Services, needle: str) -> list[Path]:
    """The database files whose bytes contain ``needle`` (any case)."""
    return [p for p in db_files(services) if _has(p, needle)]


def _has(path: Path, needle: str) -> bool:
    data = path.read_bytes()
    return needle.encode() in data or needle.lower().encode() in data.lower()


async def test_forget_leaves_no_copy_for_search_export_or_grep(
    scene: Scene, services: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    said = await scene.say("forget", scene.entry_id)

    assert [e.text for e in services.memory.entries(USER)] == [KEPT]
    for query in (WORD, HANZI, "grandmother's stew smoked paprika"):
        hits = services.memory.search(USER, query)
        assert not [h for h in hits if COPY in h.chunk.text.lower() or HANZI in h.chunk.text]
        assert COPY not in (await scene.say("search", query)).lower()
    exported = await scene.say("export")
    assert KEPT in exported and WORD not in exported.lower() and HANZI not in exported
    for fmt in ("markdown", "json"):
        cmd_export(services, argparse.Namespace(user=USER, format=fmt, json=False))
        out = capsys.readouterr().out
        assert KEPT in out and WORD not in out.lower() and HANZI not in out
    assert WORD not in (await scene.say("why")).lower()
    assert holding(services, COPY) == [] and holding(services, HANZI) == []
    # The user's question is no copy: it stays, word for word, in the daily log.
    assert [p.parent.name for p in holding(services, QUESTION)] == ["memory"]
    # Only the undo copy in pcai.db still holds the memory; the index holds no copy.
    for needle in (COPY, HANZI):
        assert [p.name.startswith("pcai.db") for p in holding_db(services, needle)] == [True]
    # What was forgotten leaves a marker, not a hole: the log still shows a message was there.
    logs = "".join(p.read_text("utf-8") for p in user_files(services) if p.parent.name == "memory")
    assert "[forgotten]" in logs and "Tell me about the stew again" in logs
    assert scene.entry_id in said and "/undo" in said

    # Once the undo window has passed the job drops the copy: pcai.db holds it no more.
    runner = JobRunner(services, now=lambda: datetime.now().astimezone() + timedelta(minutes=11))
    for spec in default_jobs():
        await runner.run(spec)
    assert all(status.ok for status in runner.status.values())
    assert holding_db(services, COPY) == [] and holding_db(services, HANZI) == []
    assert holding(services, COPY) == []


async def test_undo_puts_back_every_copy_forget_blanked(scene: Scene, services: Services) -> None:
    files = {p: p.read_bytes() for p in user_files(services) if p.name != "MEMORY.md"}
    keywords = services.memory.document(USER).keywords
    rows = _rows(services)
    assert WORD in " ".join(keywords).lower()  # the summaries' keyword index names it

    await scene.say("forget", scene.entry_id)
    assert holding(services, COPY) == [] and WORD not in " ".join(
        services.memory.document(USER).keywords
    )
    said = await scene.say("undo")

    assert "logs" in said and scene.entry_id in said
    changed = [p.name for p, data in files.items() if p.read_bytes() != data]
    assert changed == []  # logs, summaries, topic, session: byte for byte as before
    assert _rows(services) == rows  # /why records, proposals, short-term rows
    assert services.memory.document(USER).keywords == keywords
    assert ENTRY in [e.text for e in services.memory.entries(USER)]
    hits = services.memory.search(USER, "grandmother's stew smoked paprika", 20)
    kinds = {h.chunk.kind for h in hits if COPY in h.chunk.text.lower()}
    assert "memory" in kinds and len(kinds) >= 2  # the restored copies are indexed again


def _rows(services: Services) -> list[tuple[str, ...]]:
    """The user's rows in pcai.db that forget may change (their text as stored)."""
    conn = services.state.conn
    out: list[tuple[str, ...]] = []
    for sql in (
        "SELECT id, text, fields, conflicts_shown, status FROM pending_memories WHERE user_key=?",
        "SELECT id, content FROM short_term_memory WHERE user_key=?",
        "SELECT user_key, injected FROM last_injection WHERE user_key=?",
        "SELECT id, injected FROM injection_history WHERE user_key=?",
    ):
        out += [tuple(str(v) for v in r) for r in conn.execute(sql, (USER,)).fetchall()]
    return sorted(out)


async def test_the_fallback_prompt_holds_live_memories_only(
    scene: Scene, services: Services
) -> None:
    old = services.memory.remember(USER, "I used to drink espresso at night")
    services.governance.set_status(USER, old.id, "archived", now=scene.clock, reason="test")
    await scene.say("forget", scene.entry_id)

    # A short "thanks" searches nothing and matches no layer: the static fallback answers.
    scene.fake.queue_chat("You're welcome.")
    await scene.agent.respond(scene.msg("thanks!", "504"))
    block = scene.memory_block()

    assert "fallback" in block and KEPT in block
    assert WORD not in block.lower() and HANZI not in block and "espresso" not in block
    assert "status:" not in block and "- id:" not in block  # entries rendered, not the raw file


async def test_undo_within_the_window_brings_the_memory_back(
    scene: Scene, services: Services
) -> None:
    await scene.say("forget", scene.entry_id)
    assert all(h.chunk.unit_id != scene.entry_id for h in services.memory.search(USER, WORD))

    said = await scene.say("undo")

    assert scene.entry_id in said and "log" in said.lower()
    assert ENTRY in [e.text for e in services.memory.entries(USER)]
    hits = services.memory.search(USER, WORD)
    assert hits and hits[0].chunk.unit_id == scene.entry_id
    # One undo per forget: the next /undo takes back the act before it (the user's confirm),
    # named, and not the forget again; then nothing is left.
    again = await scene.say("undo")
    assert again.startswith("↩️ Undone: confirming 'Grandmother") and "log" not in again
    assert ENTRY not in [e.text for e in services.memory.entries(USER)]
    assert "nothing to undo" in (await scene.say("undo")).lower()


async def test_undo_after_the_window_is_refused_in_one_sentence(
    scene: Scene, services: Services
) -> None:
    await scene.say("forget", scene.entry_id)
    later = datetime.now().astimezone() + timedelta(minutes=11)

    said = await services.forgetter.undo(USER, now=later)

    assert said.error and said.text.count(". ") <= 1 and "10" in said.text
    assert ENTRY not in [e.text for e in services.memory.entries(USER)]
    # The copy is dropped by the job, not by the refusal; after it the answer is the same.
    services.forgetter.expire(later)
    again = await services.forgetter.undo(USER, now=later)
    assert again.text == said.text


async def test_forgetting_the_latest_version_forgets_the_versions_it_replaced(
    services: Services,
) -> None:
    now = datetime.now().astimezone()
    first = services.memory.remember(USER, f"My locker is number 12 at the {WORD} gym", now=now)
    services.governance.set_status(USER, first.id, "deprecated", now=now, reason="replaced")
    second = services.memory.remember(
        USER, f"My locker is number 31 at the {WORD} gym", now=now, supersedes=(first.id,)
    )
    services.memory.remember(USER, KEPT, now=now)
    backend = backend_for(services)

    said = (await Desk(backend).command(USER, "forget", second.id, "en")).text

    assert [e.text for e in services.memory.entries(USER)] == [KEPT]
    assert "1 earlier version" in said
    assert holding(services, WORD) == []
    undone = await services.forgetter.undo(USER, now=now)
    assert not undone.error
    assert {e.id for e in services.memory.entries(USER)} >= {first.id, second.id}


async def test_forget_of_an_unknown_or_foreign_id_changes_nothing(services: Services) -> None:
    mine = services.memory.remember(USER, KEPT)
    other = services.memory.remember("telegram_777", f"The {WORD} of someone else")
    desk = Desk(backend_for(services))

    answer = await desk.command(USER, "forget", other.id, "en")

    assert answer.error and "telegram_777" not in answer.text and WORD not in answer.text
    assert [e.id for e in services.memory.entries(USER)] == [mine.id]
    assert [e.id for e in services.memory.entries("telegram_777")] == [other.id]


async def test_an_unreadable_log_stops_the_forget_with_one_sentence(services: Services) -> None:
    entry = services.memory.remember(USER, ENTRY)
    bad = services.memory.paths(USER).daily_log("2026-01-05")
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(b"# 2026-01-05\n\n- 09:00:00 user: caf\xe9 " + ENTRY.encode() + b"\n")
    good = services.memory.paths(USER).daily_log("2026-01-06")
    good.write_text(f"# 2026-01-06\n\n- 09:00:00 user: {ENTRY}\n", encoding="utf-8")
    before = good.read_bytes()
    desk = Desk(backend_for(services))

    answer = await desk.command(USER, "forget", entry.id, "en")

    # Not forgotten halfway: the entry and every copy stay until the file is fixed.
    assert answer.error and "2026-01-05" in answer.text and "/forget again" in answer.text
    assert [e.id for e in services.memory.entries(USER)] == [entry.id]
    assert good.read_bytes() == before
    bad.write_bytes(bad.read_bytes().replace(b"\xe9", b"e"))
    assert not (await desk.command(USER, "forget", entry.id, "en")).error
    assert holding(services, WORD) == []
