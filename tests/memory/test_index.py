"""The SQLite index: schema version, model/dimension changes, CJK-aware and hostile-safe FTS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import memory
from agent.ollama_client import OllamaEmbedder
from memory import Memory
from memory.base.db import connect
from memory.config import index_path
from memory.index.chunks import SCHEMA_VERSION, IndexStore
from memory.index.embedders import E5Embedder
from memory.index.schema import VIEWS
from memory.index.text import fts_match_query
from memory.index.views import VIEW_KIND
from tests.fakes.ollama_server import FakeOllama, fake_embedding

USER = "cli_alice"
ENTRIES = (
    "我每天早上都喝咖啡，不加糖也不加奶",
    "我最喜歡的顏色是藍色，房間也漆成藍色",
    "We deploy to production every Friday afternoon",
    "週末常去陽明山爬山 hiking with friends",
)

# Hostile FTS5 syntax around real words, and which of ENTRIES BM25 must find for it: every
# operator, quote, column filter and bracket is read as plain text, so a query finds exactly
# the entries holding its words (of its own user), and syntax alone finds nothing.
DEPLOY = {2}
HOSTILE: list[tuple[str, set[int]]] = [
    ('"', set()),
    ('""', set()),
    ('"unbalanced', set()),
    ("*", set()),
    ("deploy*", DEPLOY),
    ("-", set()),
    ("-deploy", DEPLOY),
    ("NEAR", set()),
    ("NEAR(deploy tea)", DEPLOY),
    ("deploy NEAR/2 tea", DEPLOY),
    ("AND", set()),
    ("OR", set()),
    ("NOT", set()),
    ("deploy AND", DEPLOY),
    ("OR deploy", DEPLOY),
    ("NOT deploy", DEPLOY),
    ("body:deploy", DEPLOY),
    ("col:term", set()),
    ("(", set()),
    (")", set()),
    ("(deploy OR", DEPLOY),
    ("deploy)", DEPLOY),
    ("^deploy", DEPLOY),
    ("{body}: deploy", DEPLOY),
    ("'", set()),
    (":", set()),
    ("", set()),
    ("   ", set()),
    ("🙂", set()),
    ("🙂🔥☕", set()),
    ('咖啡 AND "藍色', {0, 1}),  # telegram_7's coffee entry holds 咖啡 too: it stays theirs
    ("\x00", set()),
    ("a" * 1000, set()),
    ("咖" * 600, set()),  # one 600-character phrase, found nowhere
]


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory, embedder: E5Embedder) -> Iterator[Memory]:
    """One indexed data folder shared by the read-only tests of this module."""
    data = tmp_path_factory.mktemp("filled") / "botmemory"
    built = memory.open(data, embedder=embedder)
    for text in ENTRIES:
        built.service.remember(USER, text)
    built.service.remember("telegram_7", "另一個人的咖啡習慣：每天三杯黑咖啡")
    yield built
    built.close()


def _found(library: Memory, query: str) -> list[str]:
    return [h.chunk.text for h in library.search(USER, query, 10)]


def test_schema_version_and_model_are_recorded(library: Memory) -> None:
    conn = library.store.conn
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta == {"embed_model": E5Embedder.MODEL, "embed_dim": "384", VIEWS: VIEW_KIND}
    assert library.store.needs_rebuild is False  # ensure_index already rebuilt it


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("咖啡", ENTRIES[0]),
        ("藍色", ENTRIES[1]),
        ("爬山", ENTRIES[3]),
        ("deploy", ENTRIES[2]),
        ("Friday", ENTRIES[2]),
        ("hiking", ENTRIES[3]),
    ],
)
def test_keyword_queries_find_their_entry(filled: Memory, query: str, expected: str) -> None:
    assert expected in _found(filled, query)
    # BM25 alone must find it too: the CJK-spaced FTS matches a two-character word.
    fts = filled.store.fts_search(USER, fts_match_query(query), 10)
    texts = [c.text for c in filled.store.chunks([cid for cid, _ in fts]).values()]
    assert expected in texts


def test_fts_does_not_match_a_word_that_is_absent(filled: Memory) -> None:
    assert filled.store.fts_search(USER, fts_match_query("綠茶"), 10) == []
    assert filled.store.fts_search(USER, fts_match_query("kubernetes"), 10) == []


@pytest.mark.parametrize(("query", "expected"), HOSTILE)
def test_hostile_fts_syntax_is_harmless(filled: Memory, query: str, expected: set[int]) -> None:
    chunks_before = filled.store.count()
    fts = filled.store.fts_search(USER, fts_match_query(query), 10)
    found = filled.store.chunks([cid for cid, _ in fts]).values()
    assert {c.text for c in found} == {ENTRIES[i] for i in expected}
    hits = filled.search(USER, query, 5)
    assert {h.chunk.user_key for h in hits} <= {USER}
    assert {ENTRIES[i] for i in expected} <= {h.chunk.text for h in hits}
    assert filled.store.count() == chunks_before  # nothing was dropped or deleted


def test_model_change_re_embeds_instead_of_mixing(
    data_dir: Path, embedder: E5Embedder, fake_ollama: FakeOllama
) -> None:
    first = memory.open(data_dir, embedder=embedder)
    for text in ENTRIES:
        first.service.remember(USER, text)
    count = first.store.count(USER)
    first.close()

    # Same dimension (384), another model: dimensions match, but the vectors must not mix.
    fake_ollama.dim = 384
    other = OllamaEmbedder(fake_ollama.url, "bge-m3", dim=384)
    second = memory.open(data_dir, embedder=other, ensure_index=False)
    try:
        assert second.store.needs_rebuild is True
        assert second.store.count(USER) == 0  # the old vectors are gone, not kept beside new
        stats = second.ensure_index()
        assert stats is not None and stats.added == len(ENTRIES)
        assert second.store.needs_rebuild is False
        ids = [r[0] for r in second.store.conn.execute("SELECT id FROM chunks").fetchall()]
        assert len(ids) == count
        chunks = second.store.chunks(ids)
        vectors = second.store.vectors(ids)
        for cid in ids:
            want = np.asarray(fake_embedding(chunks[cid].text, 384), dtype=np.float32)
            assert np.allclose(vectors[cid], want, atol=1e-5)
        meta = dict(second.store.conn.execute("SELECT key, value FROM meta").fetchall())
        assert meta == {"embed_model": "ollama/bge-m3", "embed_dim": "384", VIEWS: VIEW_KIND}
        assert any(ENTRIES[0] == h.chunk.text for h in second.search(USER, "咖啡", 5))
    finally:
        second.close()

    # And a different dimension (64) rebuilds the vec0 table with the new width.
    fake_ollama.dim = 64
    third = memory.open(
        data_dir, embedder=OllamaEmbedder(fake_ollama.url, "tiny", dim=64), ensure_index=False
    )
    try:
        assert third.store.needs_rebuild is True
        third.ensure_index()
        ids = [r[0] for r in third.store.conn.execute("SELECT id FROM chunks").fetchall()]
        assert {v.shape for v in third.store.vectors(ids).values()} == {(64,)}
    finally:
        third.close()


def test_reopening_with_the_same_model_keeps_the_index(
    data_dir: Path, embedder: E5Embedder
) -> None:
    first = memory.open(data_dir, embedder=embedder)
    first.service.remember(USER, ENTRIES[0])
    first.close()
    again = IndexStore(index_path(data_dir), embedder.name, embedder.dim)
    try:
        assert again.needs_rebuild is False and again.count(USER) == 1
    finally:
        again.close()


def test_a_newer_schema_is_refused_with_a_clear_error(data_dir: Path) -> None:
    index_path(data_dir).parent.mkdir(parents=True)
    conn = connect(index_path(data_dir))
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(RuntimeError, match="newer"):
        IndexStore(index_path(data_dir), "m", 8)


def test_vector_search_is_partitioned_by_user(filled: Memory) -> None:
    qvec = filled.embedder.embed_query("咖啡")
    for user in (USER, "telegram_7"):
        ids = [cid for cid, _ in filled.store.vec_search(user, qvec, 50)]
        assert ids and {c.user_key for c in filled.store.chunks(ids).values()} == {user}
        fts = [cid for cid, _ in filled.store.fts_search(user, fts_match_query("咖啡"), 50)]
        assert fts and {c.user_key for c in filled.store.chunks(fts).values()} == {user}


def test_a_corrupt_index_is_set_aside_and_rebuilt(data_dir: Path, embedder: E5Embedder) -> None:
    first = memory.open(data_dir, embedder=embedder)
    first.service.remember(USER, ENTRIES[0])
    first.close()
    index = index_path(data_dir)
    for extra in index.parent.glob(index.name + "-*"):
        extra.unlink()
    index.write_bytes(b"this is not a database at all " * 200)

    again = memory.open(data_dir, embedder=embedder, ensure_index=False)
    try:
        assert again.store.needs_rebuild is True
        again.ensure_index()
        assert [h.chunk.text for h in again.search(USER, "咖啡", 5)] == [ENTRIES[0]]
    finally:
        again.close()
    kept = list(index.parent.glob(index.name + ".corrupt-*"))
    assert kept and kept[0].read_bytes().startswith(b"this is not a database")


def test_selective_terms_drops_common_terms_and_keeps_the_rarest() -> None:
    from memory.index.text import selective_terms

    terms = ['"a"', '"b"', '"c"', '"d"']
    # 100,000 rows: "a" (30,000) and "c" (12,000) are common and costly; "d" matches nothing.
    assert selective_terms(terms, [30_000, 40, 12_000, 0], 100_000, 0.1, 12, 5000) == ['"b"']
    # Below min_rows a term is kept whatever its share (small index).
    assert selective_terms(terms, [300, 40, 120, 0], 1000, 0.1, 12, 5000) == terms[:3]
    # Every term common: the rarest one stays, so BM25 still has a say.
    assert selective_terms(terms[:2], [30_000, 20_000], 100_000, 0.1, 12, 5000) == ['"b"']
    # The cap keeps the rarest terms, in query order.
    assert selective_terms(terms, [5, 1, 3, 2], 100, 0.1, 2, 5000) == ['"b"', '"d"']
    # Rule off: everything that can match.
    assert selective_terms(terms, [30_000, 40, 12_000, 0], 100_000, 0.0, 0) == terms[:3]
    # The rows cap: the rarest terms while their rows add up to at most 5,000 ("b" and "a":
    # 4,040; "c" would make it 8,040), and the rarest one even when it alone is above it.
    counts = [4_000, 40, 4_000, 0]
    assert selective_terms(terms, counts, 100_000, 0.1, 12, 5000, 5000) == ['"a"', '"b"']
    assert selective_terms(terms, counts, 100_000, 0.1, 12, 5000, 0) == terms[:3]
    assert selective_terms(terms[:1], [9_000], 100_000, 0.1, 12, 5000, 5000) == ['"a"']


def test_doc_counts_count_phrases_by_their_commonest_token(filled: Memory) -> None:
    from memory.index.text import keyword_terms

    store = filled.store
    terms = keyword_terms("咖啡 zzzabsent")
    counts, rows = store.doc_counts(USER, terms)
    assert rows == store.count(USER)
    coffee = store.fts_search(USER, '"咖 啡"', 50)
    # A phrase costs at least as much as the rows it matches; an absent word costs nothing.
    assert counts[0] >= len(coffee) >= 1
    assert counts[1] == 0


def test_doc_counts_see_a_word_written_after_they_were_taken(library: Memory) -> None:
    library.service.remember("tg_1", "I like green tea with lemon")
    before, _ = library.store.doc_counts("tg_1", ['"xylophone"'])
    library.service.remember("tg_1", "My daughter plays the xylophone")
    after, _ = library.store.doc_counts("tg_1", ['"xylophone"'])
    assert before == [0] and after == [1]
    hits = library.search("tg_1", "xylophone", 3)
    assert hits and "xylophone" in hits[0].chunk.text
