"""Small per-person maps keep a fixed number of people, and answer the same once one is dropped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from bot.frontdesk.language import Languages
from bot.frontdesk.language_book import LanguageBook
from bot.schema import MIGRATIONS_ALL
from history import sessions
from history.sessions import SessionStore
from memory.base.lru import KEPT_PEOPLE, MB, CachePool
from memory.index.chunks import IndexStore, NewChunk
from memory.state.statedb import StateDB

MANY = KEPT_PEOPLE + 200  # more people than any of these maps keeps


def chunk(user: str, unit: str) -> NewChunk:
    return NewChunk(user, "memory", "m.md", unit, 0, unit, "", "", 1, 1, 5, "active", 3, (), unit)


def test_the_index_keeps_row_counts_and_table_names_of_a_fixed_number_of_people(
    tmp_path: Path,
) -> None:
    store = IndexStore(tmp_path / "index.sqlite", "test", 8, CachePool(MB))
    try:
        units = ["oolong tea", "oolong again", "green tea"]
        rows = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
        store.replace_units("cli_first", "m.md", [], [chunk("cli_first", u) for u in units], rows)
        assert store.doc_counts("cli_first", ['"oolong"']) == ([2], 3)
        for i in range(MANY):
            store.doc_counts(f"cli_p{i}", ['"oolong"'])
            store.fts_search(f"cli_p{i}", '"oolong"', 5)
        # Unbounded, both grew by one a person: 1,225 counts.
        assert len(store._rows) <= KEPT_PEOPLE
        assert len(store.fts._names) <= KEPT_PEOPLE
        # The first person was dropped from both; read again, the same answer.
        assert store.doc_counts("cli_first", ['"oolong"']) == ([2], 3)
        assert len(store.fts_search("cli_first", '"oolong"', 5)) == 2
    finally:
        store.close()


def test_languages_keep_a_fixed_number_of_people_and_read_a_dropped_one_again(
    tmp_path: Path,
) -> None:
    state = StateDB(tmp_path / "pcai.db", MIGRATIONS_ALL)
    try:
        langs = Languages(LanguageBook(state))
        langs.choose("telegram_1", "zh")
        for i in range(MANY):
            langs.of(f"telegram_{1000 + i}", "en")
        assert len(langs._known) <= KEPT_PEOPLE  # unbounded: 1,225
        assert langs.of("telegram_1", "en", "good morning") == "zh"  # the choice, from pcai.db
    finally:
        state.close()


def test_idle_session_locks_go_but_a_held_one_is_never_replaced(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    assert sessions.LOCKS_KEPT < MANY

    async def scenario() -> None:
        held = store.lock("telegram_1")
        async with held:
            for i in range(MANY):
                async with store.lock(f"telegram_{1000 + i}"):
                    pass
            assert len(store._locks) <= sessions.LOCKS_KEPT  # unbounded: 1,225
            assert store.lock("telegram_1") is held  # held: kept, so still one lock per session

    asyncio.run(scenario())


def test_a_lock_just_handed_out_stays_when_every_older_one_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions, "LOCKS_KEPT", 2)
    store = SessionStore(tmp_path)

    async def scenario() -> None:
        async with store.lock("telegram_1"), store.lock("telegram_2"):
            fresh = store.lock("telegram_3")  # over the cap, and nothing else is idle
            assert store.lock("telegram_3") is fresh

    asyncio.run(scenario())
