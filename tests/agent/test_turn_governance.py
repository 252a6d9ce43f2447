"""The turn's part of issue 13: short-term notes, the compaction line and threshold, and
the weight and scope a proposal carries."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agent.build import agent_worker
from agent.deferred import KIND_COMPACT
from agent.notices import NoticeBook
from agent.selection import SHORT_TERM
from memory.base.users import UserPaths
from memory.state.short_term import ShortTermStore
from memory.write.emphasis import CORE, IMPORTANT, MODEL_MAX_WEIGHT
from tests.agent.conftest import USER, Env
from tests.fakes.chat_requests import instruction_of
from tests.fakes.ollama_server import tool_reply

SUMMARY = "- **主題：** 資料庫遷移到 PostgreSQL\n- **決定：** 週五前完成部署"


def model(request: dict[str, Any]) -> str:
    """Answers chat plainly and a compaction's summary request with bullets."""
    system = instruction_of(request)
    return SUMMARY if "Summarise this conversation" in system else "好的。"


async def test_weather_calendar_and_mail_messages_are_noted_and_found_later(env: Env) -> None:
    env.fake.chat_handler = model
    await env.agent.respond(env.msg("明天早上台北會下雨，天氣預報說 18 度"))
    await env.agent.respond(env.msg("我的行事曆：週五下午三點看牙醫"))
    await env.agent.respond(env.msg("新信箱的 email password: hunter2xyz 記一下"))
    store = ShortTermStore(env.services.state)
    [weather] = store.latest(USER, "weather")
    assert weather.content == "明天早上台北會下雨，天氣預報說 18 度"
    assert weather.created_at.startswith(env.clock.date().isoformat()[:4])
    [mail] = store.latest(USER, "mail")
    assert "hunter2xyz" not in mail.content and "新信箱" in mail.content  # masked
    assert store.latest(USER, "calendar")[0].content == "我的行事曆：週五下午三點看牙醫"

    reply = await env.agent.respond(env.msg("週五的行程是什麼？"))
    block = env.memory_block()
    assert "週五下午三點看牙醫" in block and "short-term § calendar" in block
    assert SHORT_TERM in [m.layer for m in reply.injected]
    # The message being answered is not its own short-term memory.
    assert "週五的行程是什麼" not in block
    assert store.latest(USER, "calendar")[0].content == "週五的行程是什麼？"  # noted after


async def test_a_compaction_says_so_in_one_line_once_it_is_written(env: Env) -> None:
    env.fake.chat_handler = model
    env.agent.compactor.config = replace(
        env.agent.compactor.config, auto_write_threshold_turns=3, history_turns_after=1
    )
    worker = agent_worker(env.agent)
    book = NoticeBook(env.services.state)
    first = await env.agent.respond(env.msg("我們要把資料庫遷移到 PostgreSQL"))
    second = await env.agent.respond(env.msg("決定週五前完成部署"))
    assert "📝" not in first.text + second.text
    reply = await env.agent.respond(env.msg("那 PostgreSQL 部署要準備什麼？"))
    # The turn only planned it: saying "written" now would be a claim not yet true.
    assert reply.text == "好的。" and book.outbox(env.clock) == []
    assert await worker.settle()
    [told] = book.outbox(env.clock, USER)  # the line, once, for the next tick that can reach
    line = told.text
    assert "\n" not in line and line.startswith("📝") and "「對話摘要 (" in line
    assert "PostgreSQL" in line  # the new keyword, also in MEMORY.md's index
    paths = UserPaths.of(env.services.settings.data_dir, USER)
    assert "PostgreSQL" in paths.memory_md.read_text("utf-8").splitlines()[2]
    session = env.agent.sessions.path(USER).read_text("utf-8")
    assert "📝" not in session  # told to the user, not fed back to the model
    later = await env.agent.respond(env.msg("好，謝謝"))
    assert await worker.settle()
    assert "📝" not in later.text and len(book.outbox(env.clock, USER)) == 1


async def test_the_compaction_threshold_counts_the_memory_block(env: Env) -> None:
    env.fake.chat_handler = model
    counter = env.services.counter
    env.agent.compactor.config = replace(
        env.agent.compactor.config,
        auto_write_threshold_tokens=900,
        auto_write_threshold_turns=100,
        history_turns_after=1,
    )
    for text in ("我們要把資料庫遷移到 PostgreSQL", "決定週五前完成部署", "還要準備備份"):
        await env.agent.respond(env.msg(text))
        assert not env.agent.work.has(USER, KIND_COMPACT)  # system + history under 900
    rule = "回答時一律附上部署檢查清單，" + "包含備份、監控、回滾計畫與負責人。" * 16
    env.services.memory.remember(USER, rule, is_core=True)  # L0: in every prompt
    assert counter.count(rule) > 400
    await env.agent.respond(env.msg("下一步呢？"))
    assert env.agent.work.has(USER, KIND_COMPACT)  # the memory block tipped it over
    assert rule[:20] in env.memory_block()


async def test_a_proposal_carries_the_users_weight_and_the_models_scope(env: Env) -> None:
    env.fake.queue_chat(tool_reply("memory_save", text="我對花生過敏"), "請確認。")
    reply = await env.agent.respond(env.msg("記住，這很重要：我對花生過敏"))
    [p] = reply.proposals
    assert (p.text, p.weight) == ("我對花生過敏", IMPORTANT)

    env.fake.queue_chat(tool_reply("memory_save", text="回答一律用繁體中文"), "請確認。")
    reply = await env.agent.respond(env.msg("非常重要：回答一律用繁體中文"))
    assert reply.proposals[0].weight == CORE

    env.fake.queue_chat(
        tool_reply(
            "memory_save", text="部署一律用 docker compose", scope="project:pcai", weight=10
        ),
        "請確認。",
    )
    reply = await env.agent.respond(env.msg("PCAI 專案部署一律用 docker compose"))
    [p] = reply.proposals
    assert (p.scope, p.weight) == ("project:pcai", MODEL_MAX_WEIGHT)  # never core by the model

    env.fake.queue_chat(tool_reply("memory_save", text="我喜歡爵士樂", scope="everywhere"), "好。")
    reply = await env.agent.respond(env.msg("我喜歡爵士樂"))
    assert reply.proposals == ()  # a malformed scope is refused back to the model
    assert env.services.confirm.pending(USER)[-1].text != "我喜歡爵士樂"
