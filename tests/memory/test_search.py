"""Hybrid search end to end on a real index: CJK, hostile FTS input, explain, isolation."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memory import Memory
from memory.search.hybrid import query_lines
from tests.memory.daylogs import write_day_log

TZ = timezone(timedelta(hours=8))
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=TZ)


def _remember(library: Memory, user: str, *texts: str) -> None:
    for i, text in enumerate(texts):
        library.service.remember(user, text, now=NOW - timedelta(days=i))


def test_two_character_chinese_query_finds_its_entry(library: Memory) -> None:
    _remember(
        library,
        "tg_1",
        "我每天早上都喝一杯咖啡",
        "明天下午要去台北開會",
        "My cat is called Mochi",
        "週末想去爬山",
    )
    hits = library.search("tg_1", "咖啡", 3)
    assert hits and "咖啡" in hits[0].chunk.text
    assert hits[0].bm25_rank == 1


@pytest.mark.parametrize(
    "query",
    [
        '"lemon',
        "NEAR(lemon b",
        "lemon*",
        "lemon OR",
        "body:lemon",
        "'; DROP TABLE chunks; -- lemon",
        "-lemon AND (y",
        "lemon\x00",
    ],
)
def test_hostile_fts_syntax_is_harmless(library: Memory, query: str) -> None:
    _remember(library, "tg_1", "I like green tea with lemon", "My bike is a red road bike")
    before = library.store.count("tg_1")
    hits = library.search("tg_1", query, 3)
    # FTS5 syntax is read as plain words: BM25 still finds the word the syntax wraps ...
    assert hits and hits[0].chunk.text == "I like green tea with lemon"
    assert hits[0].bm25_rank == 1
    # ... and nothing in the query reached SQLite as SQL or as an FTS5 operator.
    assert library.store.count("tg_1") == before
    assert library.search("tg_1", "road bike", 1)[0].chunk.text.startswith("My bike")


def test_results_carry_their_source(library: Memory) -> None:
    write_day_log(
        library,
        "tg_2",
        "2026-02-20",
        [("user", "我養了一隻叫 Mochi 的貓", "tg-11"), ("bot", "好可愛的名字", "tg-12")],
    )
    hit = library.search("tg_2", "Mochi 貓", 1, now=NOW)[0]
    assert hit.chunk.user_key == "tg_2"
    assert hit.chunk.path == "memory/2026-02-20.md"
    assert hit.chunk.refs == ("tg-11",)
    assert hit.chunk.date.startswith("2026-02-20")
    assert hit.chunk.line_start == 3
    # The record's own text, without the neighbouring context it was indexed with.
    assert hit.chunk.text == "user: 我養了一隻叫 Mochi 的貓"


def test_users_never_see_each_other(library: Memory) -> None:
    _remember(library, "tg_1", "My password hint is the blue whale")
    _remember(library, "tg_2", "I saw a blue whale near Iceland last summer")
    # Both users hold a memory that matches the query, by words and by meaning: each search
    # finds something, and only ever the searcher's own.
    mine = library.search("tg_2", "blue whale password hint", 5)
    assert [h.chunk.text for h in mine] == ["I saw a blue whale near Iceland last summer"]
    assert {h.chunk.user_key for h in mine} == {"tg_2"}
    theirs = library.search("tg_1", "blue whale Iceland summer", 5)
    assert [h.chunk.text for h in theirs] == ["My password hint is the blue whale"]
    assert {h.chunk.user_key for h in theirs} == {"tg_1"}


def test_explain_agrees_with_the_final_ranking(library: Memory) -> None:
    write_day_log(
        library,
        "tg_3",
        "2026-02-25",
        [
            ("user", "hello", "a1"),
            ("user", "I adopted a puppy named Biscuit last week", "a2"),
            ("user", "Biscuit loves chasing tennis balls in the park", "a3"),
            ("bot", "I don't have any information about Biscuit the puppy.", "a4"),
        ],
    )
    searcher = library.service.searcher
    res = searcher.search_explained("tg_3", "hello Biscuit puppy", 5, now=NOW)
    plain = searcher.search("tg_3", "hello Biscuit puppy", 5, now=NOW)
    assert [h.chunk.id for h in res.hits] == [h.chunk.id for h in plain]
    assert [h.score for h in res.hits] == sorted((h.score for h in res.hits), reverse=True)
    for hit in res.hits:
        assert list(hit.stages) == [
            "similarity",
            "fusion",
            "recency",
            "importance",
            "length",
            "decay",
            "retrieval",
            "priority",
            "fold",
            "mmr",
        ]
        # The calibrated cosine (e5's floor 0.7) is what fusion weighs.
        assert hit.vector_similarity is not None
        assert hit.stages["similarity"] == pytest.approx(
            max(0.0, (hit.vector_similarity - 0.7) / 0.3), abs=1e-6
        )
        # Logs have no access count or weight: the retrieval score is 0.4 * relevance + constant.
        assert hit.stages["retrieval"] == pytest.approx(0.4 * hit.stages["decay"] + 0.325)
        assert hit.score == pytest.approx(hit.stages["priority"]) == hit.stages["retrieval"]
    dropped = {d.chunk.refs[0]: d for d in res.dropped}
    assert dropped["a1"].stage == "noise" and dropped["a1"].reason == "greeting"
    assert dropped["a4"].stage == "noise" and dropped["a4"].reason == "refusal"
    kept = {h.chunk.refs[0] for h in res.hits}
    assert kept == {"a2", "a3"}
    assert not kept & set(dropped)


def test_clock_drives_recency_and_decay(library: Memory) -> None:
    _remember(library, "tg_4", "I started learning the cello")
    early = library.search("tg_4", "cello", 1, now=NOW)[0]
    late = library.search("tg_4", "cello", 1, now=NOW + timedelta(days=365))[0]
    assert early.stages["fusion"] == pytest.approx(late.stages["fusion"])
    assert late.score < early.score
    assert late.stages["recency"] == pytest.approx(late.stages["fusion"], abs=1e-3)


def test_hard_minimum_drops_weak_candidates(library: Memory) -> None:
    from dataclasses import replace

    _remember(library, "tg_5", "I like green tea with lemon")
    searcher = library.service.searcher
    searcher.config = replace(searcher.config, hard_min_score=2.0)
    res = searcher.search_explained("tg_5", "green tea", 5, now=NOW)
    assert res.hits == []
    assert [d.stage for d in res.dropped] == ["hard_min"]


def test_vector_cache_sees_writes_of_another_connection(library: Memory) -> None:
    from memory.index.chunks import IndexStore

    _remember(library, "tg_6", "I keep bees on the roof")
    store = library.store
    other = IndexStore(store.path, store.model, store.dim)
    try:
        qvec = library.embedder.embed_query("bees")
        assert len(store.vec_search("tg_6", qvec, 10)) == 1
        chunk = store.chunks([store.vec_search("tg_6", qvec, 1)[0][0]])
        new = next(iter(chunk.values()))
        from memory.index.chunks import NewChunk

        other.replace_units(
            "tg_6",
            "memory/2026-01-01.md",
            [],
            [
                NewChunk(
                    "tg_6",
                    "log",
                    "memory/2026-01-01.md",
                    "x1",
                    0,
                    "h",
                    "",
                    "2026-01-01",
                    1,
                    1,
                    0.5,
                    "active",
                    5,
                    ("x1",),
                    "user: honey from the roof bees",
                )
            ],
            library.embedder.embed_passages(["user: honey from the roof bees"]),
        )
        assert new.user_key == "tg_6"
        assert len(store.vec_search("tg_6", qvec, 10)) == 2
    finally:
        other.close()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What do I usually drink in the morning?", "I drink a cup of coffee every morning"),
        ("我早上都喝什麼", "我每天早上都喝一杯咖啡"),
        ("Where did I go hiking?", "We went hiking in the mountains last weekend"),
        ("週末去哪裡爬山", "週末和朋友去陽明山爬山"),
    ],
)
def test_related_query_is_kept(library: Memory, query: str, expected: str) -> None:
    _remember(library, "tg_7", *COFFEE_AND_HIKING)
    hits = library.search("tg_7", query, 5, now=NOW)
    assert expected in [h.chunk.text for h in hits]
    assert all(h.score >= library.service.searcher.config.hard_min_score for h in hits)


@pytest.mark.parametrize(
    "query",
    [
        "How is capital gains tax calculated under the new tax law?",
        "報稅的法律規定是什麼",
        "Can my landlord deduct property tax from the deposit?",
    ],
)
def test_unrelated_query_is_dropped_by_the_thresholds(library: Memory, query: str) -> None:
    # The real e5 embedder scores unrelated text at cosine ~0.75-0.82: only its calibration
    # (floor 0.7) puts that near 0, so the thresholds can drop it.
    _remember(library, "tg_7", *COFFEE_AND_HIKING)
    res = library.service.searcher.search_explained("tg_7", query, 5, now=NOW)
    assert res.hits == []
    assert len(res.dropped) == len(COFFEE_AND_HIKING)
    assert {d.stage for d in res.dropped} <= {"min_score", "hard_min"}
    for d in res.dropped:
        assert d.stages["similarity"] < 0.4


COFFEE_AND_HIKING = (
    "I drink a cup of coffee every morning",
    "我每天早上都喝一杯咖啡",
    "We went hiking in the mountains last weekend",
    "週末和朋友去陽明山爬山",
)


def test_an_uncalibrated_embedder_keeps_raw_cosines(library: Memory) -> None:
    from memory.index.embedders import similarity_floor
    from memory.search.hybrid import HybridSearcher

    class Plain:
        """The E5 vectors without the calibration attribute (like Ollama's embedder)."""

        name = library.embedder.name
        dim = library.embedder.dim
        embed_query = library.embedder.embed_query
        embed_passages = library.embedder.embed_passages

    assert similarity_floor(library.embedder) == pytest.approx(0.7)
    assert similarity_floor(Plain()) == 0.0
    _remember(library, "tg_8", "I drink a cup of coffee every morning")
    searcher = HybridSearcher(library.store, Plain(), library.service.searcher.config)
    hit = searcher.search("tg_8", "coffee", 1, now=NOW)[0]
    assert hit.stages["similarity"] == pytest.approx(hit.vector_similarity, abs=1e-6)


def test_searches_sharing_a_pool_fetch_each_chunk_once_and_rank_as_alone(
    library: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.search.pool import CandidatePool

    _remember(
        library,
        "tg_1",
        "我每天早上都喝一杯黑咖啡",
        "咖啡豆要買衣索比亞的",
        "My cat is called Mochi and she likes coffee smells",
        "週末想去陽明山爬山",
        "下週三跟客戶開會，記得帶咖啡",
    )
    searcher = library.searcher
    latest = searcher.embedder.embed_query("咖啡")
    other = searcher.embedder.embed_query("週末要做什麼")
    alone = [
        [h.chunk.id for h in searcher.search_with_vector("tg_1", "咖啡", v, 5, now=NOW).hits]
        for v in (latest, other)
    ]
    fetched: list[int] = []
    chunks = library.store.chunks

    def counted(ids: list[int]) -> object:
        fetched.extend(ids)
        return chunks(ids)

    monkeypatch.setattr(library.store, "chunks", counted)
    pool = CandidatePool(library.store, "tg_1")
    shared = [
        [
            h.chunk.id
            for h in searcher.search_with_vector("tg_1", "咖啡", v, 5, now=NOW, pool=pool).hits
        ]
        for v in (latest, other)
    ]
    assert shared == alone  # the pool changes what is fetched, never what is found
    assert alone[0] and len(fetched) == len(set(fetched))  # each chunk fetched once


def test_a_pool_leaves_out_what_the_prompt_shows_and_fills_k_with_the_rest(
    library: Memory,
) -> None:
    from memory.search.pool import CandidatePool

    write_day_log(
        library,
        "tg_1",
        "2026-02-27",
        [
            ("user", "我的貓叫 Mochi，牠很喜歡咖啡的味道", "1"),
            ("assistant", "Mochi 聽起來很可愛", "2"),
            ("user", "咖啡豆我都買衣索比亞的", "3"),
            ("user", "週末想去陽明山爬山", "4"),
        ],
    )
    searcher = library.searcher
    vec = searcher.embedder.embed_query("咖啡")
    plain = searcher.search_with_vector("tg_1", "咖啡", vec, 2, now=NOW).hits
    assert any("Mochi" in h.chunk.text for h in plain)

    pool = CandidatePool(library.store, "tg_1", lambda c: "Mochi" in c.text)
    hits = searcher.search_with_vector("tg_1", "咖啡", vec, 2, now=NOW, pool=pool).hits
    assert len(hits) == 2 and not any("Mochi" in h.chunk.text for h in hits)
    assert "衣索比亞" in hits[0].chunk.text


def test_a_pasted_dialogue_finds_the_memory_one_line_fits(library: Memory) -> None:
    # As one vector the whole dialogue is mostly nerves and clothes, so the nerves memory came
    # first; the last line is about the dance. Each line is also a query, and a memory keeps
    # its best cosine: the dance memory, which the line fits better than any, comes first.
    dance = "I danced at the office Christmas party and it was the best night of the year"
    _remember(
        library,
        "tg_1",
        dance,
        "I get nervous before speaking in front of people, deep breaths help me",
        "My favourite shirt for the stage is the dark blue one",
        "I bought new running shoes last month",
    )
    dialogue = (
        "Sam: I have to give a talk at the conference next week\n"
        "Assistant: That sounds exciting! How do you feel about it?\n"
        "Sam: A bit nervous, honestly. What should I wear?\n"
        "Assistant: Something you feel confident in.\n"
        "Sam: Maybe my opener could be that December company celebration where I was "
        "dancing until dawn"
    )
    hits = library.search("tg_1", dialogue, 4, now=NOW)
    assert hits[0].chunk.text == dance


def test_the_lines_of_a_dialogue_are_queries_without_their_speakers() -> None:
    assert query_lines("Bart: I get nervous\n\nAssistant: Breathe.\n小明：我去跳舞") == [
        "I get nervous",
        "Breathe.",
        "我去跳舞",
    ]
    assert query_lines("Bart: one line only") == []


def test_a_dialogues_words_weigh_less_than_one_lines(library: Memory) -> None:
    # The rarest words of a whole dialogue match by chance more than a line's: its BM25 part
    # weighs half the usual 0.3 (fused = (0.7 sim + 0.15 bm25) / 0.85); one line keeps 0.3.
    _remember(library, "tg_1", "Mochi the cat sleeps on the piano", "I ride a red bike")
    for query, bm25_weight in (
        ("Ann: my cat Mochi\nBob: the piano again?", 0.15),
        ("my cat Mochi on the piano", 0.3),
    ):
        hit = library.search("tg_1", query, 2, now=NOW)[0]
        assert hit.bm25_rank == 1  # the best BM25 match: its normalised BM25 is 1
        sim = hit.stages["similarity"]
        assert hit.stages["fusion"] == pytest.approx(
            (0.7 * sim + bm25_weight) / (0.7 + bm25_weight)
        )


def test_a_dialogues_lines_fetch_no_more_candidates_than_one_line(library: Memory) -> None:
    # Each line fetches its nearest chunks, but the search judges only the depth nearest by
    # their best cosine (max(k x 2, 20) = 20 here), as a one-line query does: every candidate
    # costs a fetch and the stages of a turn. On the union of the lines' lists, up to 80.
    topics = ("cat", "bike", "piano", "garden", "bread", "train", "lake", "chess")
    _remember(library, "tg_1", *[f"Note {i} about my {t}" for i in range(8) for t in topics])
    query = "Ann: kitten purring\nBob: cycling uphill\nAnn: keyboard sonata\nBob: sprouting seeds"
    result = library.service.searcher.search_explained("tg_1", query, 1, now=NOW)
    assert all(h.bm25_rank is None for h in result.hits)  # no shared words: vectors alone
    judged = {h.chunk.id for h in result.hits} | {d.chunk.id for d in result.dropped}
    assert 0 < len(judged) <= 20, len(judged)
