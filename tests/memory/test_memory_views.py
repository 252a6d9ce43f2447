"""A confirmed memory's view (memory.index.views) lives and dies with it, and memories stay
candidates of a search however long the person's daily log grows."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import memory
from memory import E5Embedder, Memory
from memory.config import MemoryConfig, RetrievalConfig
from memory.index.embedders import normalise
from memory.index.schema import VIEWS
from memory.index.sources import KIND_MEMORY
from memory.index.t2s import to_simplified
from tests.memory.daylogs import write_day_log

USER = "cli_views"
TEA = "I drink oolong tea every morning, no sugar"
HIKE = "On weekends I hike Yangmingshan, leaving on Saturday mornings"


def _memory_ids(library: Memory) -> dict[str, int]:
    rows = library.store.conn.execute(
        "SELECT text, id FROM chunks WHERE user_key=? AND kind=?", (USER, KIND_MEMORY)
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def test_a_memory_has_a_view_nearer_its_own_question_and_loses_it_with_the_memory(
    library: Memory,
) -> None:
    tea = library.service.remember(USER, TEA)
    library.service.remember(USER, HIKE)
    ids = _memory_ids(library)
    views = library.store.memory_views(USER, list(ids.values()))
    assert set(views) == set(ids.values())
    passages = dict(zip(*library.store.user_vectors(USER), strict=True))
    asked = library.embedder.embed_query(TEA)
    view, passage = views[ids[TEA]], passages[ids[TEA]]
    assert abs(float(np.linalg.norm(view)) - 1.0) < 1e-4
    assert float(view @ asked) > float(passage @ asked)  # the view leans toward a question

    library.service.forget(USER, tea.id)
    left = library.store.conn.execute(
        "SELECT chunk_id FROM memory_view WHERE user_key=?", (USER,)
    ).fetchall()
    assert [r[0] for r in left] == [ids[HIKE]]  # the forgotten memory's view went with it


def test_an_index_built_before_views_gets_them_once(library: Memory) -> None:
    library.service.remember(USER, TEA)
    library.service.remember(USER, HIKE)
    ids = sorted(_memory_ids(library).values())
    stored = library.store.memory_views(USER, ids)
    library.store.conn.execute("DELETE FROM memory_view")
    library.store.conn.commit()
    assert library.store.memory_views(USER, ids) == {}

    assert library.service.indexer.fill_views(USER) == 2
    again = library.store.memory_views(USER, ids)
    assert set(again) == set(ids)
    assert all(np.allclose(again[i], stored[i], atol=1e-5) for i in ids)
    assert library.service.indexer.fill_views(USER) == 0  # nothing left to fill


def _crowded(data_dir: Path, embedder: E5Embedder, candidates: int) -> set[int]:
    """The chunk ids a search saw (kept or dropped) with a memory among 90 log lines that
    talk of the query's words more than the memory does."""
    cfg = MemoryConfig(retrieval=RetrievalConfig(memory_candidates=candidates))
    with memory.open(data_dir, embedder=embedder, settings=cfg) as library:
        if not _memory_ids(library):
            library.service.remember(USER, "My daughter Mia plays the violin in the school band")
            lines = [
                ("user", f"the concert hall on {street} street had a music night {n}", f"r{n}")
                for n, street in enumerate(["Elm", "Oak", "Pine", "Cedar", "Birch", "Maple"] * 15)
            ]
            write_day_log(library, USER, "2026-11-20", lines)
        query = "we went to a music concert tonight"
        result = library.service.search_result(USER, query, library.embedder.embed_query(query), 6)
        seen = {h.chunk.id for h in result.hits} | {d.chunk.id for d in result.dropped}
        mine = set(_memory_ids(library).values())
        return seen & mine


def test_memories_stay_candidates_however_long_the_log(
    data_dir: Path, embedder: E5Embedder
) -> None:
    # Without a fetch of their own the 90 log lines fill the depth and the memory is
    # never even judged; with it, it is a candidate for the thresholds to judge.
    assert _crowded(data_dir, embedder, 0) == set()
    assert len(_crowded(data_dir, embedder, 36)) == 1


def test_memories_past_the_k_are_listed_not_lost(library: Memory) -> None:
    # Eight memories of one subject; the search keeps its top 3 and lists the others that
    # passed the thresholds as past the k, so the turn can still order them in (Chinese
    # cosines run higher: more memories pass, and those past the k were lost).
    teas = [
        "I drink oolong tea every morning",
        "My favourite tea is jasmine green tea",
        "I brew my tea in a small clay teapot",
        "I buy tea leaves at the market on Saturdays",
        "Milk tea with tapioca pearls is my weekend treat",
        "I stopped drinking tea after six in the evening",
        "My mother taught me to brew tea with care",
        "I keep a tea diary of every tea I taste",
    ]
    for tea in teas:
        library.service.remember(USER, tea)
    query = "what tea do I like to drink?"
    result = library.service.search_result(USER, query, library.embedder.embed_query(query), 3)
    assert len(result.hits) == 3
    seen = {h.chunk.text for h in result.hits} | {d.chunk.text for d in result.dropped}
    assert seen == set(teas)  # each one kept, dropped by a stage, or listed past the k
    past = [d for d in result.dropped if d.stage == "depth"]
    assert past
    assert all(d.stages["fusion"] >= library.service.searcher.config.min_score for d in past)


TEA_ZH = "我每天早上都喝烏龍茶，不加糖"


def test_views_made_before_the_fold_are_made_again_with_a_simplified_half(
    data_dir: Path, embedder: E5Embedder
) -> None:
    """An index whose views read the Traditional text only as it is (before
    memory.index.t2s) drops them when it opens; the deferred work's fill_views makes them
    again, a Traditional memory's with a second half whose query reads the Simplified text.
    Fails without the migration: the old views stay."""
    assert to_simplified(TEA_ZH) == "我每天早上都喝乌龙茶，不加糖"
    with memory.open(data_dir, embedder=embedder) as library:
        library.service.remember(USER, TEA_ZH)
        library.service.remember(USER, TEA)
        ids = _memory_ids(library)
        passages = dict(zip(*library.store.user_vectors(USER), strict=True))
        # What an index made before the fold holds: the text embedded as it is, no record
        # in meta of how its views were made.
        old = {
            cid: normalise(passages[cid] + embedder.embed_query(text)) for text, cid in ids.items()
        }
        library.store.add_memory_views(USER, old)
        library.store.conn.execute("DELETE FROM meta WHERE key=?", (VIEWS,))
        library.store.conn.commit()
    with memory.open(data_dir, embedder=embedder) as library:
        assert library.store.memory_views(USER, list(ids.values())) == {}
        assert library.service.indexer.fill_views(USER) == 2
        made = library.store.memory_views(USER, list(ids.values()))
    zh, en = ids[TEA_ZH], ids[TEA]
    dim = embedder.dim
    simplified = normalise(passages[zh] + embedder.embed_query(to_simplified(TEA_ZH)))
    assert made[zh].shape == (2 * dim,)
    assert np.allclose(made[zh][:dim], old[zh], atol=1e-5)  # the view as it was
    assert np.allclose(made[zh][dim:], simplified, atol=1e-5)  # and the Simplified one
    assert not np.allclose(simplified, old[zh], atol=1e-3)
    assert made[en].shape == (dim,)  # English folds to itself: one view
    assert np.allclose(made[en], old[en], atol=1e-5)
    # Opened again, the views made the new way stay.
    with memory.open(data_dir, embedder=embedder) as library:
        assert set(library.store.memory_views(USER, [zh, en])) == {zh, en}
