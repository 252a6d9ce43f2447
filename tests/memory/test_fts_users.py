"""BM25 per user: another user's text does not touch a user's ranking; schema 2 upgrades."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memory
from memory import Memory
from memory.base.db import connect
from memory.base.logs import format_record, log_header
from memory.config import index_path
from memory.index.chunks import SCHEMA_VERSION
from memory.index.embedders import E5Embedder
from memory.index.text import keyword_terms, space_cjk

USER = "tg_1"
OTHER = "tg_2"
MINE = (
    "我每天早上都喝咖啡，不加糖也不加奶",
    "咖啡店旁邊的麵包也很好吃",
    "We deploy to production every Friday afternoon",
    "Deploy scripts live in the ops repository",
)
QUERIES = ("咖啡", "deploy on Friday", "麵包", "production", "早上喝什麼")


def _bm25(library: Memory, user: str, query: str) -> list[tuple[int, float]]:
    return library.store.fts_search(user, " OR ".join(keyword_terms(query)), 20)


def test_another_users_text_changes_neither_hits_nor_scores(library: Memory) -> None:
    for text in MINE:
        library.service.remember(USER, text)
    before = {q: _bm25(library, USER, q) for q in QUERIES}
    counts = library.store.doc_counts(USER, keyword_terms("咖啡 deploy"))
    assert all(before[q] for q in ("咖啡", "deploy on Friday", "麵包"))

    # The other user writes the same words many times: with one FTS table for everyone
    # their rows set this user's IDF (and were read, then filtered out, on every search).
    for i in range(12):
        library.service.remember(OTHER, f"第{i}杯咖啡，deploy {i} on Friday 麵包")

    assert {q: _bm25(library, USER, q) for q in QUERIES} == before
    assert library.store.doc_counts(USER, keyword_terms("咖啡 deploy")) == counts
    theirs = _bm25(library, OTHER, "咖啡")
    assert len(theirs) == 12
    assert {c.user_key for c in library.store.chunks([cid for cid, _ in theirs]).values()} == {
        OTHER
    }


class CountingEmbedder:
    """The real e5 model, counting the passages it embeds."""

    def __init__(self, inner: E5Embedder) -> None:
        self.inner = inner
        self.passages = 0
        self.similarity_floor = inner.similarity_floor

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.inner.embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.passages += len(texts)
        return self.inner.embed_passages(texts)


LOG = (
    ("user", "週末去陽明山爬山，天氣很好"),
    ("assistant", "聽起來很棒！有看到海芋嗎？"),
    ("user", "有，calla lilies everywhere near the trail"),
)


def _fill(library: Memory) -> None:
    for text in MINE:
        library.service.remember(USER, text)
    library.service.remember(OTHER, "另一個人的咖啡習慣：每天三杯黑咖啡")
    day = "2026-03-07"
    path = library.data_dir / "users" / USER / "memory" / f"{day}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = log_header(day)
    for i, (who, text) in enumerate(LOG):
        body += format_record(datetime(2026, 3, 7, 9, i), who, text, f"m{i}")
    path.write_text(body, encoding="utf-8")
    library.indexer.sync_file(USER, f"memory/{day}.md")


def _seen(library: Memory) -> dict[str, object]:
    now = datetime(2026, 3, 8, 12, 0).astimezone()
    out: dict[str, object] = {}
    for user in (USER, OTHER):
        for q in (*QUERIES, "爬山", "海芋", "calla lilies"):
            hits = library.searcher.search(user, q, 5, now=now)
            out[f"{user} {q}"] = (
                [(h.chunk.id, h.chunk.text) for h in hits],
                _bm25(library, user, q),
            )
    return out


def _to_schema_2(data_dir: Path, library: Memory) -> None:
    """Rewrite a fresh index as PCAI wrote schema 2: one contentless FTS table for everyone."""
    rows = []
    for user in (USER, OTHER):
        paths = library.indexer.store.indexed_paths(user)
        for rel in paths:
            from memory.base.users import UserPaths
            from memory.index.indexer import _unique
            from memory.index.sources import units_of

            for unit in _unique(units_of(UserPaths.of(data_dir, user), rel)):
                for c in library.indexer.chunks_for(user, unit):
                    (cid,) = library.store.conn.execute(
                        "SELECT id FROM chunks WHERE user_key=? AND path=? AND unit_id=? "
                        "AND ordinal=?",
                        (user, rel, c.unit_id, c.ordinal),
                    ).fetchone()
                    rows.append((cid, space_cjk(c.text), space_cjk(c.fts_text)))
    library.close()
    conn = connect(index_path(data_dir))
    for (n,) in conn.execute("SELECT n FROM fts_tables").fetchall():
        conn.execute(f"DROP TABLE fts_u{n}")
    conn.execute("DROP TABLE fts_tables")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(body, context, content='', "
        "contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.executemany("INSERT INTO chunks_fts (rowid, body, context) VALUES (?, ?, ?)", rows)
    conn.execute("CREATE INDEX chunks_id_user ON chunks (id, user_key)")
    conn.execute("PRAGMA user_version=2")
    conn.commit()
    conn.close()


def test_a_schema_2_index_is_upgraded_without_embedding_and_finds_the_same(
    data_dir: Path, embedder: E5Embedder
) -> None:
    counting = CountingEmbedder(embedder)
    first = memory.open(data_dir, embedder=counting)
    _fill(first)
    expected = _seen(first)
    assert all(expected[f"{USER} {q}"][1] for q in ("咖啡", "爬山", "海芋", "calla lilies"))  # type: ignore[index]
    ids = sorted(r[0] for r in first.store.conn.execute("SELECT id FROM chunks"))
    _to_schema_2(data_dir, first)

    counting.passages = 0
    again = memory.open(data_dir, embedder=counting)
    try:
        conn = again.store.conn
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        assert not again.store.fts_refill_pending and not again.store.needs_rebuild
        assert counting.passages == 0  # vectors kept: nothing re-embedded
        assert sorted(r[0] for r in conn.execute("SELECT id FROM chunks")) == ids
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "chunks_fts" not in names and "chunks_id_user" not in names
        assert _seen(again) == expected
    finally:
        again.close()


def test_a_unit_edited_before_the_upgrade_is_indexed_anew(
    data_dir: Path, embedder: E5Embedder
) -> None:
    counting = CountingEmbedder(embedder)
    first = memory.open(data_dir, embedder=counting)
    _fill(first)
    _to_schema_2(data_dir, first)
    log_file = data_dir / "users" / USER / "memory" / "2026-03-07.md"
    log_file.write_text(
        log_file.read_text(encoding="utf-8").replace("海芋", "繡球花"), encoding="utf-8"
    )

    counting.passages = 0
    again = memory.open(data_dir, embedder=counting)
    try:
        assert not again.store.fts_refill_pending
        assert 0 < counting.passages < 5  # only the edited record (and its neighbours)
        assert _bm25(again, USER, "海芋") == []
        found = again.store.chunks([cid for cid, _ in _bm25(again, USER, "繡球花")])
        assert any("繡球花" in c.text for c in found.values())
    finally:
        again.close()


@pytest.mark.parametrize("user", [USER, OTHER])
def test_each_user_gets_their_own_table(library: Memory, user: str) -> None:
    library.service.remember(user, "咖啡")
    assert library.store.fts.table(user) is not None
    other = OTHER if user == USER else USER
    assert library.store.fts.table(other) is None
    assert library.store.fts_search(other, '"咖 啡"', 5) == []


# A pasted dialogue in Chinese: the opening lines spend more than the term budget (a bigram a
# character), and only the last line names the memory.
DIALOGUE = (
    "欸，跟你說喔，我今天早上睡過頭，差一點就趕不上公車，跑到氣喘吁吁的！\n"
    "後來到了學校，老師說下禮拜要交一份很長的報告，題目是關於城市交通的演變。\n"
    "放學以後我跟同學在操場打籃球，打到天黑才回家，媽媽說晚餐都涼掉了。\n"
    "對了，我突然好想再去吃那家芒果冰淇淋"
)


def test_a_long_query_is_searched_by_its_newest_terms(library: Memory) -> None:
    for text in ("巴特在新開的冰淇淋店吃了芒果口味的冰淇淋，覺得非常開心。", *MINE):
        library.service.remember(USER, text)
    terms = keyword_terms(DIALOGUE)
    assert len(terms) == 32 and terms[-1] == '"淇 淋"'  # the budget ends where the text does

    hits = library.searcher.text_hits(USER, DIALOGUE, 5)
    texts = [c.text for c in library.store.chunks([cid for cid, _ in hits]).values()]
    assert any("芒果" in t for t in texts)
