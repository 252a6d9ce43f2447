"""Every command, fed as an Update through the real Application."""

from __future__ import annotations

import json

import memory
from bot.app import Services
from bot.telegram.application import post_init, post_shutdown
from tests.bot.conftest import FRIEND, OWNER, Harness


async def test_start_and_help(tg: Harness) -> None:
    await tg.send(OWNER, "/start", lang="zh-hant")
    await tg.send(FRIEND, "/help", lang="en")
    welcome, help_en = tg.api.texts()
    assert "PCAI" in welcome and "/help" in welcome and "你好" in welcome
    assert "/remember" in help_en and "remember something" in help_en and "記住" not in help_en


async def test_commands_registered_in_both_languages(tg: Harness) -> None:
    await post_init(tg.app)
    calls = tg.api.named("setMyCommands")
    assert len(calls) == 2
    names = [c["command"] for c in calls[0]["commands"]]
    for name in (
        "start",
        "help",
        "memory",
        "search",
        "remember",
        "forget",
        "pending",
        "why",
        "history",
        "new",
        "export",
        "stats",
    ):
        assert name in names
    assert calls[1]["language_code"] == "zh"
    assert any("記憶" in c["description"] for c in calls[1]["commands"])


async def test_memory_lists_ids_in_pages(tg: Harness, services: Services) -> None:
    await tg.send(OWNER, "/memory")
    assert "No memories" in tg.api.texts()[-1]
    ids = [services.memory.remember("telegram_1001", f"fact number {i}").id for i in range(12)]
    await tg.send(OWNER, "/memory")
    page1 = tg.api.texts()[-1]
    assert ids[0] in page1 and ids[9] in page1 and ids[10] not in page1
    assert "/memory 2" in page1
    await tg.send(OWNER, "/memory 2")
    page2 = tg.api.texts()[-1]
    assert ids[10] in page2 and ids[11] in page2 and ids[0] not in page2


async def test_search_finds_a_two_character_chinese_word(tg: Harness, services: Services) -> None:
    services.memory.remember("telegram_1001", "我每天早上喝咖啡")
    await tg.send(OWNER, "/search 咖啡")
    assert "咖啡" in tg.api.texts()[-1]
    await tg.send(OWNER, "/search")
    assert "/search" in tg.api.texts()[-1]


async def test_a_proposal_shows_buttons_and_expiry(tg: Harness, services: Services) -> None:
    await tg.offer(OWNER, "我喜歡藍色", lang="zh-hant")
    sent = tg.last_markup()
    assert "我喜歡藍色" in sent["text"] and "前有效" in sent["text"]
    labels = [b["text"] for b in sent["reply_markup"]["inline_keyboard"][0]]
    assert labels == ["✅ 確認", "✏️ 修改", "🗑 捨棄"]
    assert services.memory.entries("telegram_1001") == []  # nothing written before confirm


async def test_english_speakers_get_english_buttons(tg: Harness) -> None:
    await tg.offer(OWNER, "I like green tea", lang="en")
    labels = [b["text"] for b in tg.last_markup()["reply_markup"]["inline_keyboard"][0]]
    assert labels == ["✅ Confirm", "✏️ Edit", "🗑 Discard"]


async def test_forget_removes_the_entry(tg: Harness, services: Services) -> None:
    entry = services.memory.remember("telegram_1001", "I live in Taipei")
    await tg.send(OWNER, f"/forget {entry.id}")
    assert services.memory.entries("telegram_1001") == []
    await tg.send(OWNER, "/forget m-nope")
    assert "m-nope" in tg.api.texts()[-1]


async def test_pending_shows_each_proposal_with_buttons(tg: Harness) -> None:
    await tg.send(OWNER, "/pending")
    assert "Nothing is waiting" in tg.api.texts()[-1] or "沒有" in tg.api.texts()[-1]
    await tg.offer(OWNER, "My first car was a white Corolla")
    await tg.offer(OWNER, "My second car is a grey Prius")
    before = len(tg.api.named("sendMessage"))
    await tg.send(OWNER, "/pending")
    shown = tg.api.named("sendMessage")[before:]
    assert [("Corolla" in s["text"], "Prius" in s["text"]) for s in shown] == [(1, 0), (0, 1)]
    assert all(s["reply_markup"] for s in shown)


async def test_why_lists_the_injected_memories(tg: Harness, services: Services) -> None:
    await tg.send(OWNER, "/why")
    assert "No memories" in tg.api.texts()[-1]
    core = services.memory.remember(
        "telegram_1001", "I always prefer tea over coffee", is_core=True
    )
    await tg.send(OWNER, "what should I drink this afternoon?")
    await tg.send(OWNER, "/why")
    [head, line] = tg.api.texts()[-1].splitlines()
    assert head == "Memories used for the last reply:"
    assert (
        line.startswith("[L0 ") and "I always prefer tea over coffee" in line and core.id in line
    )


async def test_history_new_stats(tg: Harness, services: Services) -> None:
    key = "telegram_1001"
    old = services.memory.remember(
        key, "咖啡 is my morning drink", canonical_topic="drink:morning"
    )
    new = services.library.update(key, old.id, "熱茶 is my morning drink now")
    await tg.send(OWNER, "/history drink:morning")
    # The topic's timeline, oldest first, each version with its status and what it replaced.
    head, first, second = tg.api.texts()[-1].splitlines()
    assert "drink:morning" in head
    assert old.id in first and "[deprecated]" in first and "咖啡" in first
    assert new.id in second and "[active]" in second and "熱茶" in second
    assert second.endswith(f"(← {old.id})")

    await tg.send(OWNER, "let's plan the trip to Tainan next weekend")
    assert [m.content for m in services.sessions.load(key).messages][-2:] == [
        "let's plan the trip to Tainan next weekend",
        "ok",
    ]
    assert tg.model is not None
    tg.model.queue_chat("Topic: planning a weekend trip to Tainan.")  # the model's summary
    await tg.send(OWNER, "/new")
    assert "fresh conversation" in tg.api.texts()[-1]
    assert services.sessions.load(key).messages == []  # the old turns were summarised away
    full = services.memory.paths(key).root / "MEMORY_FULL.md"
    assert "planning a weekend trip to Tainan" in full.read_text(encoding="utf-8")
    assert tg.api.named("sendChatAction")  # /new may summarise with the LLM: typing shown

    await tg.offer(OWNER, "My bike is a green Brompton")
    await tg.send(OWNER, "/stats")
    stats = dict(line.split(": ", 1) for line in tg.api.texts()[-1].splitlines()[1:])
    # The replaced version is history, not a second memory (issue 23).
    assert stats["memories"] == "1 (1 active)" and stats["older versions"] == "1 (/history)"
    assert stats["pending"] == "1"
    assert int(stats["indexed chunks"]) >= 2


async def test_export_sends_a_markdown_file(tg: Harness, services: Services) -> None:
    hiking = services.memory.remember("telegram_1001", "I like hiking in Yangmingshan")
    services.memory.remember("telegram_1002", "Friend's note: the spare key is in the blue pot")
    await tg.send(OWNER, "/export")
    [doc] = tg.api.named("sendDocument")
    assert doc["chat_id"] == OWNER and doc["caption"] == "Your memories (Markdown)"
    [(method, part, filename, content)] = tg.api.uploads
    assert (method, part) == ("sendDocument", "document")
    assert filename.startswith("pcai-memory-") and filename.endswith(".md")
    text = content.decode("utf-8")
    assert "- I like hiking in Yangmingshan" in text and hiking.id in text
    assert "spare key" not in text
    assert text == services.memory.paths("telegram_1001").memory_md.read_text(encoding="utf-8")


async def test_export_falls_back_to_text(tg: Harness, services: Services) -> None:
    services.memory.remember("telegram_1001", "I like hiking")
    tg.api.refuse_documents = True
    await tg.send(OWNER, "/export")
    assert "I like hiking" in tg.api.texts()[-1]


async def test_users_never_see_each_other(tg: Harness, services: Services) -> None:
    services.memory.remember("telegram_1001", "owner secret: 鑰匙在花盆下")
    await tg.send(FRIEND, "/memory")
    await tg.send(FRIEND, "/search 鑰匙")
    await tg.send(FRIEND, "/export")
    tg.api.refuse_documents = True
    await tg.send(FRIEND, "/export")
    everything = json.dumps(tg.api.calls, ensure_ascii=False, default=str)
    assert "鑰匙在花盆下" not in everything


async def test_shutdown_closes_the_model_client_and_keeps_proposals(
    tg: Harness, services: Services
) -> None:
    await tg.offer(OWNER, "My bike is a green Brompton")
    await tg.send(OWNER, "hello")  # the model client is open now
    agent = services.agent
    assert agent is not None
    [(_, client)] = agent.llm._clients.values()  # type: ignore[attr-defined]
    assert not client._client.is_closed  # ollama.AsyncClient over an httpx.AsyncClient
    await post_shutdown(tg.app)
    assert client._client.is_closed
    # Proposals are committed as they are made: a process opening the data dir now sees them.
    with memory.open(services.settings.data_dir, embedder=services.embedder) as again:
        [waiting] = again.pending.pending("telegram_1001")
        assert waiting.text == "My bike is a green Brompton"


async def test_an_unknown_command_is_answered(tg: Harness) -> None:
    await tg.send(OWNER, "/settings", lang="en")
    await tg.send(FRIEND, "/foo bar", lang="zh-hant")
    unknown_en, unknown_zh = tg.api.texts()
    assert unknown_en == "I don't know the command /settings. /help lists the commands."
    assert unknown_zh == "沒有 /foo 這個指令。輸入 /help 看所有指令。"


async def test_memory_past_the_last_page_or_not_a_number_says_so(
    tg: Harness, services: Services
) -> None:
    services.memory.remember("telegram_1001", "I like green tea")
    await tg.send(OWNER, "/memory 2")
    await tg.send(OWNER, "/memory abc")
    past, word = tg.api.texts()
    assert past == "There is no page 2: your memories fill 1 (/memory 1)."
    assert word == "Usage: /memory [page], e.g. /memory 2"
