"""/history finds a memory's versions by meaning, not only by the exact topic (real e5)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bot.app import Services
from memory.base.markdown import Entry
from memory.index.passages import PassageCache
from memory.write.archaeology import find_history, topic_words

TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=TPE)
ALICE, BOB = "cli_alice", "cli_bob"


def _save(
    services: Services, text: str, now: datetime, *, topic: str = "", replace: bool = False
) -> Entry:
    """Propose and confirm (or replace) through the real write path."""
    fields = {"canonical_topic": topic} if topic else None
    p = services.confirm.propose(ALICE, text, now=now, fields=fields)
    act = services.user_acts.act(ALICE, p.id, "replace" if replace else "confirm", via="reply")
    return services.confirm.confirm(act, now=now)


def _coffee_chain(services: Services) -> tuple[Entry, Entry]:
    latte = _save(services, "我喜歡喝拿鐵咖啡", T0, topic="drink_preference")
    tea = _save(
        services, "我現在只喝綠茶", T0 + timedelta(days=2), topic="drink_preference", replace=True
    )
    assert tea.supersedes == (latte.id,)
    _save(services, "專案 Apollo 使用 MySQL 資料庫", T0, topic="apollo:database")
    _save(services, "我住在台北", T0, topic="home:city")
    return latte, tea


def _texts(services: Services, user: str, query: str) -> list[list[str]]:
    return [[e.text for e in m.chain] for m in services.governance.history(user, query)]


def test_a_word_of_an_old_version_finds_the_whole_chain(services: Services) -> None:
    latte, tea = _coffee_chain(services)
    # 咖啡 is only in the replaced version: the exact-topic lookup found nothing here.
    matches = services.governance.history(ALICE, "咖啡")
    assert [[e.id for e in m.chain] for m in matches] == [[latte.id, tea.id]]
    assert matches[0].topic == "drink_preference"
    assert [e.status for e in matches[0].chain] == ["deprecated", "active"]
    # The model's memory_archaeology tool takes the same road when nothing matches exactly.
    assert [e.id for e in services.governance.archaeology(ALICE, "咖啡")] == [latte.id, tea.id]


def test_topic_words_and_meaning_find_the_topic(services: Services) -> None:
    _coffee_chain(services)
    chain = ["我喜歡喝拿鐵咖啡", "我現在只喝綠茶"]
    assert _texts(services, ALICE, "drink") == [chain]  # a word of the topic's name
    assert _texts(services, ALICE, "Drink Preference") == [chain]  # the name, spelt otherwise
    assert _texts(services, ALICE, "喝什麼") == [chain]  # by meaning alone
    assert _texts(services, ALICE, "我住哪裡") == [["我住在台北"]]
    assert _texts(services, ALICE, "天氣預報") == []


def test_id_and_exact_topic_still_win(services: Services) -> None:
    latte, tea = _coffee_chain(services)
    by_id = services.governance.history(ALICE, latte.id)
    assert [(m.via, [e.id for e in m.chain]) for m in by_id] == [("id", [latte.id, tea.id])]
    by_topic = services.governance.history(ALICE, "apollo:database")
    assert [m.via for m in by_topic] == ["topic"]
    assert [e.text for e in by_topic[0].chain] == ["專案 Apollo 使用 MySQL 資料庫"]


def test_another_users_history_is_never_found(services: Services) -> None:
    _coffee_chain(services)
    cache = PassageCache(services.embedder)
    assert find_history(services.memory, cache, BOB, "咖啡") == []
    assert find_history(services.memory, cache, BOB, "drink_preference") == []


def test_topic_words() -> None:
    assert topic_words("drink_preference") == "drink preference"
    assert topic_words("database:choice") == "database choice"
    assert topic_words(" Home/City ") == "home city"


def test_history_of_a_word_lists_only_what_mentions_it_under_one_heading(
    services: Services,
) -> None:
    from bot.frontdesk.desk import history_lines

    for text in (
        "我喜歡喝烏龍茶",
        "下午會泡一壺紅茶",
        "我喜歡喝拿鐵咖啡",
        "我住在台北",
        "我的貓叫小黑",
    ):
        _save(services, text, T0)
    matches = services.governance.history(ALICE, "茶")
    assert sorted(e.text for m in matches for e in m.chain) == [
        "下午會泡一壺紅茶",
        "我喜歡喝烏龍茶",
    ]
    shown = history_lines("茶", matches, "zh")
    assert shown.count("茶:") == 1 and shown.startswith("茶:\n")  # was: "茶:" over each one
    assert "咖啡" not in shown and "台北" not in shown


def test_history_lists_no_memory_the_search_found_by_a_shared_character_or_meaning(
    services: Services,
) -> None:
    # 喝茶 "drink tea": the search finds every drink by the character 喝 and by meaning, and
    # those that do not mention tea were listed under "喝茶:" beside the one that does.
    from bot.frontdesk.desk import history_lines

    for text in ("我每天下午都喝茶", "我喜歡喝拿鐵咖啡", "我每天早上喝一杯熱可可", "我住在台北"):
        _save(services, text, T0)
    found = [h.chunk.text for h in services.memory.search(ALICE, "喝茶", 10)]
    assert "我喜歡喝拿鐵咖啡" in found  # the search does find it: the guard is what drops it
    assert _texts(services, ALICE, "喝茶") == [["我每天下午都喝茶"]]
    shown = history_lines("喝茶", services.governance.history(ALICE, "喝茶"), "zh")
    assert "咖啡" not in shown and "可可" not in shown and "我每天下午都喝茶" in shown


def test_a_query_of_several_words_lists_what_mentions_its_most_telling_one(
    services: Services,
) -> None:
    # Was: any word of 3+ letters (or any character pair) was enough, so "tea I drink" listed
    # the coffee memory by "drink", and 我的茶 ("my tea") listed nothing: no memory holds the
    # pair 我的 or 的茶, though one names the tea. Now the query's rarest word among the
    # person's memories (茶, tea) is the one a listed memory must mention (two as rare: either).
    for text in (
        "I like green tea",
        "I drink coffee at noon",
        "I drink a glass of water before bed",
        "我每天下午都喝茶",
        "我喜歡喝拿鐵咖啡",
        "我的貓叫小黑",
        "我的車是藍色的",
    ):
        _save(services, text, T0)
    found = [h.chunk.text for h in services.memory.search(ALICE, "tea I drink", 10)]
    assert "I drink coffee at noon" in found  # found by its word "drink"
    assert _texts(services, ALICE, "tea I drink") == [["I like green tea"]]
    assert _texts(services, ALICE, "我的茶") == [["我每天下午都喝茶"]]
    assert _texts(services, ALICE, "我喝的茶") == [["我每天下午都喝茶"]]
