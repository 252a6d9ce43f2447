"""Small local models break memory_save three ways; "remember" still proposes, honestly.

The fake Ollama plays each broken behaviour (tests/fakes/ollama_server.py): no tool call, the
call written as ```json text, and arguments with other names. The pipeline runs for real
(real client, SQLite, files); nothing is ever written before the user's own act.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from agent.llm import ToolCall
from agent.prompt import turn_message
from agent.remember import claims_saved, honest_text, remember_request, settle_reply
from agent.tools import SCHEMAS, ToolBox
from agent.turn.tools import TurnTools
from memory.base.users import UserPaths
from memory.index.text import has_cjk
from tests.agent.conftest import USER, Env
from tests.fakes.ollama_server import (
    BROKEN_MODES,
    JSON_TEXT,
    NO_TOOL_CALL,
    WRONG_NAMES,
    as_json_text,
    tool_reply,
)

PEANUTS = "我對花生過敏"
# What the user must read after a proposal, in their language: not saved until they confirm.
PENDING_ZH = "（這條記憶還沒有儲存：要等你確認後才會記住。）"
PENDING_EN = "(Not saved yet: it is kept only once you confirm it.)"
CLAIM_AFTER_TOOL = "好的，已經幫你記住了！"


def small_model(body: dict[str, Any]) -> Any:
    """Asked to remember, it calls memory_save with the fact; afterwards it claims a save."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return CLAIM_AFTER_TOOL
    text = turn_message(str(messages[-1]["content"]))
    for trigger in ("記住：", "記得", "remember that "):
        if trigger in text:
            return tool_reply("memory_save", text=text.split(trigger, 1)[1].strip())
    return "好的。"


def _pending(env: Env) -> list[str]:
    return [p.text for p in env.services.confirm.pending(USER, env.clock)]


def _memory_md(env: Env) -> str:
    path = UserPaths.of(env.services.settings.data_dir, USER).memory_md
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.mark.parametrize("mode", sorted(BROKEN_MODES))
async def test_each_broken_mode_still_proposes_and_never_claims_a_save(
    env: Env, mode: str
) -> None:
    env.fake.chat_handler = small_model
    env.fake.tool_mode = mode
    reply = await env.agent.respond(env.msg(f"記住：{PEANUTS}"))
    assert [p.text for p in reply.proposals] == [PEANUTS]
    assert _pending(env) == [PEANUTS]
    assert env.services.memory.entries(USER) == [] and PEANUTS not in _memory_md(env)
    assert "```" not in reply.text and "memory_save" not in reply.text and "{" not in reply.text
    assert reply.text.endswith(PENDING_ZH)  # the claim is followed by the truth
    # What the session keeps is what the user saw: no JSON, the honest line.
    saved = json.loads(env.agent.sessions.path(USER).read_text("utf-8"))["messages"][-1]
    assert saved["content"] == reply.text


async def test_wrong_argument_names_reach_the_tool_as_the_right_ones(env: Env) -> None:
    env.fake.chat_handler = small_model
    env.fake.tool_mode = WRONG_NAMES
    await env.agent.respond(env.msg(f"記住：{PEANUTS}"))
    sent = env.fake.chat_requests[0]["messages"]
    assert turn_message(sent[-1]["content"]) == f"記住：{PEANUTS}"
    tool_answer = json.loads(env.fake.chat_requests[1]["messages"][-1]["content"])
    assert tool_answer["status"] == "pending_confirmation"  # not "unknown argument 'content'"


async def test_json_text_is_run_as_the_call_the_model_meant(env: Env) -> None:
    # The model's own wording (not the user's) is proposed: the call was read, not guessed.
    env.fake.queue_chat(
        as_json_text(tool_reply("memory_save", "好的", text="使用者對花生過敏"), style="tag"),
        "已提出，請按確認。",
    )
    reply = await env.agent.respond(env.msg(f"記住：{PEANUTS}"))
    assert [p.text for p in reply.proposals] == ["使用者對花生過敏"]
    assert reply.text == "已提出，請按確認。"  # already honest: nothing added
    assert len(env.fake.chat_requests) == 2


async def test_a_model_repeating_its_written_call_makes_one_proposal(env: Env) -> None:
    env.fake.chat_handler = lambda body: (
        "已提出，請確認。"
        if sum(m["role"] == "tool" for m in body["messages"]) >= 2
        else as_json_text(tool_reply("memory_save", text=PEANUTS))
    )
    reply = await env.agent.respond(env.msg(f"記住：{PEANUTS}"))
    assert len(reply.proposals) == 1 and _pending(env) == [PEANUTS]


@pytest.mark.parametrize(
    ("said", "proposed"),
    [
        ("記住：我的車牌是 ABC-1234", "我的車牌是 ABC-1234"),
        ("請記得我每週三晚上去游泳，謝謝", "我每週三晚上去游泳"),
        ("對了，幫我記住我兒子叫小明", "我兒子叫小明"),
        ("Please remember that I am vegetarian.", "I am vegetarian"),
        (
            "Remember: my dentist is Dr. Lin on Fifth Street",
            "my dentist is Dr. Lin on Fifth Street",
        ),
        ("can you remember that my sister lives in Osaka?", "my sister lives in Osaka"),
        ("don't forget my birthday is May 3", "my birthday is May 3"),
    ],
)
async def test_with_no_tool_call_the_users_own_words_are_proposed(
    env: Env, said: str, proposed: str
) -> None:
    env.fake.tool_mode = NO_TOOL_CALL
    env.fake.queue_chat("OK, I've saved it.")
    reply = await env.agent.respond(env.msg(said))
    assert [p.text for p in reply.proposals] == [proposed]
    assert env.services.memory.entries(USER) == []
    # The claim stays, followed by the truth in the user's language.
    assert reply.text.startswith("OK, I've saved it.\n\n")
    truth = reply.text.removeprefix("OK, I've saved it.\n\n")
    assert truth == (PENDING_ZH if has_cjk(said) else PENDING_EN)


@pytest.mark.parametrize(
    "said",
    [
        "你記得我對什麼過敏嗎？",  # a question
        "記得提醒我明天帶傘",  # a reminder
        "remember to call mom tonight",
        "do you remember my sister's name?",
        "我昨天去爬山了，風景很好",  # no trigger at all
        "記住了",  # "got it", not a fact
    ],
)
async def test_questions_reminders_and_plain_talk_propose_nothing(env: Env, said: str) -> None:
    env.fake.queue_chat("好的。")
    reply = await env.agent.respond(env.msg(said))
    assert reply.proposals == () and _pending(env) == []
    assert reply.text == "好的。"


async def test_the_fallback_goes_through_the_same_guards(env: Env) -> None:
    env.fake.queue_chat("好的，我記住了！")
    reply = await env.agent.respond(env.msg("記住：我的密碼是 hunter22"))
    assert reply.proposals == () and _pending(env) == []
    assert "hunter22" not in _memory_md(env)
    assert reply.text.startswith("好的，我記住了！\n\n（這次沒有建立記憶：")

    env.services.memory.remember(USER, "我每天早上喝咖啡，不加糖")
    env.fake.queue_chat("I'll remember that.")
    reply = await env.agent.respond(env.msg("remember that 我每天早上喝咖啡，不加糖"))
    assert reply.proposals == ()
    assert "這條已經記住了" in reply.text  # the duplicate's reason, not a false save

    env.fake.queue_chat("好的，已經記住了。")
    reply = await env.agent.respond(env.msg("記住：哈哈"))  # noise
    assert reply.proposals == () and "沒有建立記憶" in reply.text


async def test_a_false_claim_without_a_request_is_corrected(env: Env) -> None:
    env.fake.queue_chat("Sure, I've saved that you like hiking.")
    reply = await env.agent.respond(env.msg("I went hiking on Sunday and loved it"))
    assert reply.proposals == ()
    assert reply.text == (
        "Sure, I've saved that you like hiking.\n\n(Correction: nothing was saved this time.)"
    )


async def test_a_reminder_tool_answering_the_request_is_not_second_guessed(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    async def remind(args: dict[str, Any]) -> Mapping[str, Any]:
        calls.append(args)
        return {"status": "pending_confirmation"}

    # The reminder tool belongs to another change: register a schema for this test.
    schema = {"type": "function", "function": {"name": "reminder_create", "parameters": {}}}
    monkeypatch.setitem(SCHEMAS, "reminder_create", schema)
    services = env.services
    tools = TurnTools(
        USER, env.clock, "zh", "1", services.memory, services.confirm, services.governance,
        services.counter,
    )  # fmt: skip
    # The model answered "記得…" with a reminder instead.
    box = ToolBox({**tools.toolbox().handlers, "reminder_create": remind})
    await box.call(ToolCall("reminder_create", {}))
    text = await settle_reply(tools, box, "記得明天早上九點開會", "好，明天九點提醒你。")
    assert calls == [{}] and tools.proposals == [] and _pending(env) == []
    assert text == "好，明天九點提醒你。"
    # Without that tool's answer the same words are proposed as a memory.
    text = await settle_reply(tools, tools.toolbox(), "記得明天早上九點開會", "好。")
    assert [p.text for p in tools.proposals] == ["明天早上九點開會"]


async def test_a_group_never_sees_a_written_call(env: Env) -> None:
    env.fake.queue_chat(as_json_text(tool_reply("memory_save", "好的", text="A 喜歡茶")))
    reply = await env.agent.respond(
        env.msg("@bot 記住：A 喜歡茶", in_group=True, group_session="telegram_group_-100")
    )
    assert reply.text == "好的" and reply.proposals == ()
    assert _pending(env) == []


@pytest.mark.parametrize(
    ("said", "wanted"),
    [
        ("記住我對花生過敏", "我對花生過敏"),
        ("记住：我住在上海", "我住在上海"),
        ("你要記得我不吃牛肉喔", "我不吃牛肉"),
        ("麻煩記下來：會議室密碼不對外公開", "會議室密碼不對外公開"),
        ("OK, keep in mind that I work night shifts", "I work night shifts"),
        ("記得嗎", None),
        ("我記得你說過", None),
        ("Note that the API returns 404 here", None),
        ("記住", None),
    ],
)
def test_remember_request(said: str, wanted: str | None) -> None:
    assert remember_request(said) == wanted


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("好的，已經幫你記住了！", True),
        ("已儲存。", True),
        ("我會記住的。", True),
        ("Got it, I've saved that.", True),
        ("I'll remember that you like tea.", True),
        ("Your preference has been saved.", True),
        ("我提出了一條記憶，請確認後才會儲存。", False),
        ("I have not saved anything yet; please confirm.", False),
        ("你喜歡烏龍茶。", False),
    ],
)
def test_claims_saved(text: str, claim: bool) -> None:
    assert claims_saved(text) is claim


def test_honest_text() -> None:
    pending_zh, pending_en = PENDING_ZH, PENDING_EN
    assert honest_text("已提出，請按確認。", "zh", proposed=True) == "已提出，請按確認。"
    assert honest_text("已記住，請確認", "zh", proposed=True).endswith(pending_zh)
    assert honest_text("Sure.", "en", proposed=True) == f"Sure.\n\n{pending_en}"
    assert honest_text("", "en", proposed=True) == pending_en.strip("()")
    assert honest_text("你喜歡茶。", "zh", proposed=False) == "你喜歡茶。"
    assert honest_text("", "zh", proposed=False) == ""


@pytest.mark.parametrize("mode", [JSON_TEXT, NO_TOOL_CALL])
async def test_nothing_is_proposed_in_an_ordinary_turn(env: Env, mode: str) -> None:
    env.fake.chat_handler = small_model
    env.fake.tool_mode = mode
    reply = await env.agent.respond(env.msg("今天天氣真好，我們去公園散步吧"))
    assert reply.proposals == () and reply.text == "好的。"
