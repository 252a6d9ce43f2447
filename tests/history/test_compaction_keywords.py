"""Compaction adds the summary's new keywords to MEMORY.md's keyword index."""

from __future__ import annotations

import os
from datetime import timedelta

from history.compaction import summary_keywords
from history.sessions import Session
from history.summarize import ConversationSummary
from memory.base.markdown import KEYWORDS_LABEL, parse_memory
from memory.base.users import UserPaths
from tests.history.conftest import HistoryKit
from tests.history.test_compaction import NOW, USER, chat, compactor


async def test_compaction_indexes_new_keywords_and_keeps_the_memories(kit: HistoryKit) -> None:
    memory = kit.library.service
    tea = memory.remember(USER, "我每天早上喝烏龍茶")
    session = chat(15)
    result = await compactor(kit).maybe_compact(session, USER, NOW)
    assert result is not None and result.keywords
    paths = UserPaths.of(kit.library.data_dir, USER)
    text = paths.memory_md.read_text("utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith(KEYWORDS_LABEL))
    full = paths.memory_full_md.read_text("utf-8")
    for word in result.keywords:  # each is in the index and in the written summary
        assert word in line and word.lower() in full.lower()
    doc = parse_memory(text)
    assert doc.keywords == result.keywords and doc.entries == (tea,)
    assert memory.entries(USER) == [tea]

    # A second compaction of the same talk adds nothing twice.
    again = chat(15)
    second = await compactor(kit).maybe_compact(again, USER, NOW)
    assert second is not None and second.keywords == ()
    assert parse_memory(paths.memory_md.read_text("utf-8")).keywords == result.keywords


def test_keywords_come_only_from_what_the_summary_wrote() -> None:
    messages = chat(6).messages
    summary = ConversationSummary(body="- **主題：** Fallback Bot 與 gateway", gist="")
    words = summary_keywords(messages, summary)
    assert words and all(w.lower() in summary.body.lower() for w in words)
    assert summary_keywords(messages, ConversationSummary(body="- 閒聊", gist="")) == []


async def test_an_unreadable_memory_md_does_not_stop_compaction(kit: HistoryKit) -> None:
    paths = UserPaths.of(kit.library.data_dir, USER)
    paths.memory_md.parent.mkdir(parents=True, exist_ok=True)
    paths.memory_md.write_bytes(b"# MEMORY\n\n- caf\xe9\n")  # not UTF-8
    before = paths.memory_md.read_bytes()
    result = await compactor(kit).maybe_compact(chat(15), USER, NOW)
    assert result is not None and result.keywords == ()
    assert paths.memory_md.read_bytes() == before  # never rewritten
    assert os.path.exists(paths.memory_full_md)


async def test_a_role_name_is_never_a_keyword(kit: HistoryKit) -> None:
    # A small model runs on past its turn ("...\nuser\n...") and its summary speaks of "the
    # user": the role name was the commonest word of both, so "user" joined the index.
    session = Session(USER)
    for i in range(15):
        when = NOW - timedelta(minutes=2 * (15 - i))
        session.append("user", f"What should I see in Kyoto on day {i}?", when, msg_id=f"tg-{i}")
        reply = f"The user could visit a temple in Kyoto.\nuser\nAnd day {i + 1}?\nassistant\nOk"
        session.append("assistant", reply, when + timedelta(seconds=30))
    summary = ConversationSummary(
        body="- **主題：** The user plans a Kyoto trip; the user asked about temples.",
        gist="User plans a Kyoto trip",
    )
    plan = compactor(kit).plan(session)
    assert plan is not None
    result = await compactor(kit).apply(session, USER, NOW, plan, summary)
    assert result is not None and "Kyoto" in result.keywords
    assert not {"user", "assistant"} & {k.lower() for k in result.keywords}
    text = UserPaths.of(kit.library.data_dir, USER).memory_md.read_text("utf-8")
    [line] = [ln for ln in text.splitlines() if ln.startswith(KEYWORDS_LABEL)]
    assert "Kyoto" in line and "user" not in line.lower()
