"""Section gating: a dominant section never hides a section the message is about (real e5)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from agent.build import agent_worker
from agent.deferred import DeferredWorker
from agent.pipeline import Agent
from agent.prefetch import WrappedEmbedder
from agent.prompt import carried_memories
from agent.sections import SectionMatcher, closest, section_descriptions
from agent.selection import L2
from agent.types import IncomingMessage
from bot.app import Services, build_agent, build_services
from bot.settings import load_settings
from history.section_words import section_words
from history.topic_index import TopicState, record_turn, sections_to_query
from memory.base.markdown import Entry
from memory.index.embedders import E5Embedder
from memory.index.passages import PassageCache, passage_key
from tests.fakes.ollama_server import FakeOllama

USER = "cli_alice"
PREF, WORK, HOME = "偏好 Preferences", "工作 Work", "個人 Personal"


class CountingEmbedder(WrappedEmbedder):
    """The real e5 model, counting the query embeddings a turn asks for, and the calls."""

    def __init__(self, inner: E5Embedder) -> None:
        super().__init__(inner)
        self.queries: list[str] = []
        self.calls: list[list[str]] = []  # the texts of each call that embeds queries
        self.passages: list[str] = []

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Count, then embed."""
        self.queries.append(text)
        self.calls.append([text])
        return self.inner.embed_query(text)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Count, then embed them in one call."""
        self.queries.extend(texts)
        self.calls.append(list(texts))
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Keep the texts, then embed."""
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)


@dataclass
class World:
    """An agent over real services with e5, and the fake Ollama for the chat."""

    services: Services
    agent: Agent
    fake: FakeOllama
    embedder: CountingEmbedder
    clock: datetime
    worker: DeferredWorker  # records each turn in the topic index, as the app's does

    def searched(self) -> list[str]:
        """The texts the last turn's search layer (L2) injected; the fallback is not search."""
        return [m.text for m in self.agent.why(USER) if m.layer == L2]

    async def ask(self, text: str) -> str:
        """One turn; returns the memory block the model was shown."""
        self.clock += timedelta(minutes=1)
        self.fake.queue_chat("好的。")
        await self.agent.respond(IncomingMessage(user_key=USER, text=text, time=self.clock))
        assert await self.worker.settle()  # the turn's deferred work, before the next message
        return carried_memories(self.fake.chat_requests[-1]["messages"])


@pytest.fixture
def world(tmp_path: Path, fake_ollama: FakeOllama, embedder: E5Embedder) -> Iterator[World]:
    """Preferences (four memories), work (two) and personal (one), all confirmed."""
    settings = load_settings(
        {"PCAI_DATA_DIR": str(tmp_path / "botmemory"), "OLLAMA_HOST": fake_ollama.url}
    )
    counting = CountingEmbedder(embedder)
    services = build_services(settings, embedder=counting)
    services.memory.ensure_index()
    now = datetime.now().astimezone().replace(microsecond=0)
    for text in ("我喜歡喝拿鐵咖啡", "我不吃香菜", "I prefer dark mode in every app", "我愛吃辣"):
        services.memory.remember(USER, text, section=PREF, now=now)
    for text in ("每週一早上十點有團隊會議", "My manager is Alice"):
        services.memory.remember(USER, text, section=WORK, now=now)
    services.memory.remember(USER, "太太生日是三月五日", section=HOME, now=now)
    agent = build_agent(services)
    yield World(services, agent, fake_ollama, counting, now, agent_worker(agent))
    services.close()


async def _make_preferences_dominant(world: World) -> None:
    questions = ("我平常喜歡喝什麼飲料呢？", "我有什麼不吃的食物嗎？", "我吃東西喜歡什麼口味？")
    for question in questions:
        await world.ask(question)
        found = [m.source for m in world.agent.why(USER) if m.layer == L2]
        assert found and set(found) == {f"MEMORY.md § {PREF}"}
    overview = world.agent.topics.overview(USER)
    assert overview.dominant == PREF and overview.proportions == {PREF: 1.0}
    # Three turns on one section: MEMORY_TOPIC.md names it, with what the turns used.
    assert overview.current_topic == PREF and overview.topic_summary
    assert overview.prune == ()  # day one: no advice yet to drop a section (issue 30)


async def test_dominance_does_not_hide_a_named_section(world: World) -> None:
    await _make_preferences_dominant(world)
    world.embedder.queries.clear()
    world.embedder.calls.clear()
    question = "我下週的工作會議幾點開始？"
    block = await world.ask(question)
    # Gated away before (only 偏好 was searched, then the static fallback stood in).
    assert "每週一早上十點有團隊會議" in world.searched()
    assert "[L2 | " in block and "fallback" not in block
    # Gating reused the turn's query vector: one embedding, a Traditional line too (only the
    # memories' views are read in Simplified, memory.index.views).
    assert world.embedder.calls == [[question]]


async def test_dominance_does_not_hide_a_section_by_meaning(world: World) -> None:
    await _make_preferences_dominant(world)
    question = "what did Alice want to talk about?"  # no keyword of 工作 Work at all
    assert not any(w.casefold() in question for w in section_words(WORK))
    await world.ask(question)
    assert "My manager is Alice" in world.searched()
    injected = world.agent.why(USER)
    assert any(m.layer == L2 and m.source == f"MEMORY.md § {WORK}" for m in injected)


async def test_gating_still_keeps_out_what_the_message_is_not_about(world: World) -> None:
    await _make_preferences_dominant(world)
    block = await world.ask("我最近喜歡喝什麼咖啡？")
    assert "我喜歡喝拿鐵咖啡" in world.searched()
    assert "太太生日" not in block and "團隊會議" not in block


def test_both_halves_of_a_bilingual_heading_and_its_words_name_it() -> None:
    words = section_words(WORK)
    assert {"工作 Work", "工作", "Work", "會議", "meeting"} <= set(words)
    assert {"偏好", "Preferences", "Preference"} <= set(section_words(PREF))
    assert section_words("關於老蔡", {"關於老蔡": ["老蔡"]}) == ["關於老蔡", "老蔡"]
    state = TopicState()
    for _ in range(5):
        state = record_turn(state, [PREF], datetime(2026, 2, 8))
    known = [PREF, WORK, HOME]
    assert sections_to_query(state, "我下週的工作會議幾點？", known) == [PREF, WORK]
    assert sections_to_query(state, "next week's meeting?", known) == [PREF, WORK]
    assert sections_to_query(state, "what's the plan?", known) == [PREF]
    assert sections_to_query(state, "what's the plan?", known, about=[HOME]) == [PREF, HOME]


def test_closest_sections_are_within_the_margin_of_the_best() -> None:
    assert closest({"a": 0.65, "b": 0.60, "c": 0.40}) == ["a", "b"]
    assert closest({"a": 0.65, "b": 0.56}, margin=0.08) == ["a"]
    assert closest({}) == []


def test_a_section_is_described_by_its_newest_live_entries() -> None:
    entries = [
        Entry("1", "old", section=WORK, created_at="2026-01-01"),
        Entry("2", "gone", section=WORK, created_at="2026-05-01", status="archived"),
        Entry("3", "newer", section=WORK, created_at="2026-03-01"),
        Entry("4", "newest", section=WORK, created_at="2026-04-01"),
        Entry("5", "mid", section=WORK, created_at="2026-02-01"),
        Entry("6", "咖啡", section=PREF, created_at="2026-02-01"),
    ]
    assert section_descriptions(entries) == {
        WORK: "工作 Work: newest; newer; mid",
        PREF: "偏好 Preferences: 咖啡",
    }


async def test_a_cold_turn_embeds_only_its_query(world: World) -> None:
    """A person whose sections were embedded before: after the process's cache lost them (a
    restart, or a thousand other people since), the turn reads them from the index."""
    await _make_preferences_dominant(world)
    descriptions = set(section_descriptions(world.services.memory.entries(USER)).values())
    assert descriptions & set(world.embedder.passages)  # the warm turns did embed them
    cold = build_agent(world.services)  # a new process's agent: its caches are empty
    fake, counting = world.fake, world.embedder
    world = World(world.services, cold, fake, counting, world.clock, agent_worker(cold))
    world.embedder.passages.clear()
    queries = len(world.embedder.queries)
    block = await world.ask("I usually drink what in the morning?")
    assert "拿鐵" in block  # gating still finds the preference
    assert not descriptions & set(world.embedder.passages)
    assert len(world.embedder.queries) == queries + 1


def test_stored_section_vectors_score_as_fresh_ones(world: World) -> None:
    """The same similarities, to the last bit, read from the index as embedded afresh."""
    memory = world.services.memory
    store, floor = memory.searcher.store, memory.searcher.floor
    descriptions = section_descriptions(memory.entries(USER))
    qvec = world.embedder.embed_query("我喜歡喝什麼？")
    fresh = SectionMatcher(PassageCache(world.embedder), floor).similarities(descriptions, qvec)
    first = SectionMatcher(PassageCache(world.embedder, store=store), floor)
    assert first.similarities(descriptions, qvec, USER) == fresh
    world.embedder.passages.clear()
    matcher = SectionMatcher(PassageCache(world.embedder, store=store), floor)
    assert matcher.similarities(descriptions, qvec, USER) == fresh
    assert world.embedder.passages == []  # read, not embedded
    assert matcher.about(descriptions, qvec, USER) == closest(fresh)


def test_forgetting_a_memory_drops_the_stored_section_vectors(world: World) -> None:
    """A description holds memories' summaries: its vector goes when one of them is forgotten."""
    memory = world.services.memory
    store = memory.searcher.store
    descriptions = section_descriptions(memory.entries(USER))
    PassageCache(world.embedder, store=store).vectors(list(descriptions.values()), USER)
    keys = [passage_key(world.embedder, t) for t in descriptions.values()]
    assert len(store.passage_vectors(USER, keys)) == len(keys)
    victim = next(e for e in memory.entries(USER) if e.section == HOME)
    memory.forget(USER, victim.id)
    assert store.passage_vectors(USER, keys) == {}


async def test_a_turn_after_a_confirm_embeds_only_its_query(world: World) -> None:
    """A memory confirmed changes its section's description; the deferred work after that
    turn embeds the new one, so the next turn does not."""
    await _make_preferences_dominant(world)
    world.services.memory.remember(USER, "我早上都喝燕麥奶拿鐵", section=PREF, now=world.clock)
    described = section_descriptions(world.services.memory.entries(USER))[PREF]
    assert "燕麥奶" in described
    await world.ask("好")  # a turn: its deferred work runs before the next one (ask settles)
    assert described in world.embedder.passages
    world.embedder.passages.clear()
    calls = len(world.embedder.calls)
    block = await world.ask("我早上通常喝什麼？")
    assert "燕麥奶" in block
    assert described not in world.embedder.passages
    assert world.embedder.calls[calls:] == [["我早上通常喝什麼？"]]
