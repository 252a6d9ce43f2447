"""Compaction planned by ``Agent.respond``: the 15th user turn summarises the older
talk, done by the deferred-work worker right after the reply.

The summary goes to MEMORY_FULL.md and the daily log (both indexed), and the session keeps a
note plus the last five user turns; the user is told in one line through the outbox. When the
summariser's model fails, the extractive summary is written instead: the turn is answered and
nothing the user said is lost.
"""

from __future__ import annotations

from typing import Any

from agent.build import agent_worker
from agent.notices import NoticeBook
from history.compaction import NOTE_PREFIX
from history.sessions import KIND_COMPACTION, ROLE_USER
from memory.base.users import UserPaths
from tests.agent.conftest import USER, Env
from tests.fakes.chat_requests import instruction_of, summarised_lines

# Fourteen turns of planning a trip, with names, numbers and dates worth keeping; the 15th
# user turn reaches the turn threshold (PCAI_HISTORY_AUTO_WRITE_THRESHOLD_TURNS, 15).
TALK = [
    "我們決定十月去高雄旅行，住在駁二附近的旅館",
    "預算是每人一萬二千元，包含住宿和高鐵",
    "同行的有阿明和小華，總共三個人",
    "出發日期是10月18日星期六早上八點",
    "我負責訂高鐵票，阿明負責訂旅館",
    "第一天下午想去旗津騎腳踏車",
    "晚上去瑞豐夜市吃東西",
    "第二天早上去蓮池潭看龍虎塔",
    "中午在左營吃海鮮，小華推薦一家店叫海港餐廳",
    "下午去衛武營看表演，票價一張八百元",
    "回程是10月19日晚上七點的高鐵",
    "記得要帶身分證和悠遊卡",
    "天氣預報說那週可能會下雨，要帶雨傘",
    "我們還要決定要不要租機車",
]
LAST = "好，那就先這樣，我明天再確認高鐵的時間"
SUMMARY = (
    "- **主題：** 十月高雄三人旅行計畫\n"
    "- **決定：** 10月18日出發、10月19日晚上七點回程，住駁二附近\n"
    "- **待辦：** 我訂高鐵票，阿明訂旅館\n"
    "- **數字／人名／日期：** 每人一萬二千元；阿明、小華；衛武營票價八百元"
)


def _model(body: dict[str, Any]) -> str:
    """Chat answers briefly; asked for a conversation summary, it writes SUMMARY."""
    system = instruction_of(body)
    if system.startswith("Summarise this conversation"):
        return SUMMARY
    if system.startswith("Summarise the message"):  # the per-message summaries
        return "Goal: -\nDecision: -\nTodo: -\nFacts: -"
    return "好的，聽起來不錯。"


def _is_conversation_summary(path: str, body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return path == "/api/chat" and instruction_of({"messages": messages}).startswith(
        "Summarise this conversation"
    )


async def _talk(env: Env) -> None:
    for text in TALK:
        reply = await env.agent.respond(env.msg(text))
        assert not reply.error
    session = env.services.sessions.load(USER)
    assert all(m.kind != KIND_COMPACTION for m in session.messages)  # not yet: 14 turns


def _memory_full(env: Env) -> str:
    path = env.services.memory.paths(USER).root / "MEMORY_FULL.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _logs(env: Env) -> str:
    folder = UserPaths.of(env.services.settings.data_dir, USER).log_dir
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md")))


def _kept_user_turns(env: Env) -> list[str]:
    session = env.services.sessions.load(USER)
    return [m.content for m in session.messages if m.role == ROLE_USER]


async def test_the_15th_turn_summarises_the_older_talk_with_the_model(env: Env) -> None:
    env.fake.chat_handler = _model
    worker = agent_worker(env.agent)
    await _talk(env)
    reply = await env.agent.respond(env.msg(LAST))
    assert reply.text.startswith("好的，聽起來不錯。") and not reply.error
    assert await worker.settle()  # the worker writes what the turn planned
    [told] = NoticeBook(env.services.state).outbox(env.clock, USER)
    assert "對話摘要 (" in told.text  # the user is told what it is called
    assert "MEMORY_FULL" not in told.text  # not the name of an internal file

    # The model was asked to summarise the older turns (the first one among them) ...
    [asked] = [b for b in env.fake.chat_requests if _is_conversation_summary("/api/chat", b)]
    assert any(TALK[0] in line for line in summarised_lines(asked))
    # ... and its summary is in MEMORY_FULL.md and the daily log, both indexed.
    full = _memory_full(env)
    assert "## 對話摘要 (" in full and "十月高雄三人旅行計畫" in full and "阿明訂旅館" in full
    assert "十月高雄三人旅行計畫" in _logs(env)
    assert "MEMORY_FULL.md" in env.services.store.indexed_paths(USER)

    # The session now holds the note and the last five user turns; the next answer is
    # written from that, not from the fifteen turns (this turn's prompt was built before the
    # conversation was written and trimmed, in that order).
    session = env.services.sessions.load(USER)
    note = session.messages[0]
    assert note.kind == KIND_COMPACTION and note.content.startswith(NOTE_PREFIX)
    assert "十月高雄三人旅行計畫" in note.content and "MEMORY_FULL.md" in note.content
    assert _kept_user_turns(env) == [*TALK[-4:], LAST]
    await env.agent.respond(env.msg("高鐵幾點出發？"))
    answered = env.fake.chat_requests[-1]
    prompt = "\n".join(str(m["content"]) for m in answered["messages"])
    assert NOTE_PREFIX in prompt and TALK[0] not in prompt
    # Nothing the user said is gone: every turn is in the daily log.
    assert all(text in _logs(env) for text in [*TALK, LAST])


async def test_when_the_summariser_fails_the_extractive_summary_is_written(env: Env) -> None:
    env.fake.chat_handler = _model
    worker = agent_worker(env.agent)
    await _talk(env)
    env.fake.fail_when = _is_conversation_summary  # HTTP 500 for the summary request only
    reply = await env.agent.respond(env.msg(LAST))
    assert reply.text.startswith("好的，聽起來不錯。") and not reply.error  # still answered
    assert await worker.settle()
    [told] = NoticeBook(env.services.state).outbox(env.clock, USER)
    assert "對話摘要 (" in told.text and "MEMORY_FULL" not in told.text

    assert any(_is_conversation_summary("/api/chat", b) for b in env.fake.chat_requests)
    full = _memory_full(env)
    assert "## 對話摘要 (" in full and "十月高雄三人旅行計畫" not in full  # not the model's
    # The extractive summary keeps the facts: the place, the people, the numbers and dates.
    for fact in ("高雄", "阿明", "10月18日"):
        assert fact in full, fact
    assert "MEMORY_FULL.md" in env.services.store.indexed_paths(USER)
    session = env.services.sessions.load(USER)
    assert session.messages[0].kind == KIND_COMPACTION
    assert _kept_user_turns(env) == [*TALK[-4:], LAST]
    assert all(text in _logs(env) for text in [*TALK, LAST])
