"""The hybrid short-term context (docs/conversations.md, "The short-term window")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from history.config import HistoryConfig
from history.context import (
    fill_summaries,
    history_chat_messages,
    history_context,
    history_window,
    needs_summary,
)
from history.sessions import Message, Session
from history.summarize import (
    FIELDS,
    SummaryRequest,
    SummaryService,
    parse_structured,
    render_structured,
)

T0 = datetime(2026, 2, 8, 12, 0, tzinfo=UTC)
CONFIG = HistoryConfig()


def conversation(n: int) -> Session:
    session = Session("cli_t")
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        session.append(role, f"msg{i} 第{i}則", T0 + timedelta(minutes=i))
    return session


def test_twenty_messages_give_ten_older_and_five_verbatim_in_the_documented_layout() -> None:
    session = conversation(20)
    # two of the older ones have a summary, the rest are shown verbatim as [Old]
    session.messages[6] = Message(
        "user", "msg6 第6則", T0, summary="Goal: g6 | Decision: - | Todo: - | Facts: -"
    )
    session.messages[9] = Message(
        "assistant", "msg9 第9則", T0, summary="Goal: - | Decision: d9 | Todo: - | Facts: -"
    )
    text = history_context(session.messages, CONFIG)
    older, recent = text.split("\n\n=== Recent Context (最新 5 則原文) ===\n")
    older_lines = older.split("\n")
    assert len(older_lines) == 10
    assert older_lines[0] == "AI[Old]: msg5 第5則"  # messages 0-4 fell out of the window
    assert older_lines[1] == "User[Summary]: Goal: g6 | Decision: - | Todo: - | Facts: -"
    assert older_lines[4] == "AI[Summary]: Goal: - | Decision: d9 | Todo: - | Facts: -"
    assert older_lines[2] == "AI[Old]: msg7 第7則"
    assert recent.split("\n") == [
        "AI: msg15 第15則",
        "User: msg16 第16則",
        "AI: msg17 第17則",
        "User: msg18 第18則",
        "AI: msg19 第19則",
    ]


def test_few_messages_are_all_recent() -> None:
    text = history_context(conversation(3).messages, CONFIG)
    assert text == (
        "=== Recent Context (最新 5 則原文) ===\n"
        "User: msg0 第0則\nAI: msg1 第1則\nUser: msg2 第2則"
    )
    assert history_context([], CONFIG) == ""


def test_compaction_note_stays_first_even_when_the_window_is_full() -> None:
    session = conversation(0)
    session.append("system", "[先前討論已寫入記憶] 摘要：X", T0, kind="compaction")
    for i in range(20):
        session.append("user" if i % 2 == 0 else "assistant", f"m{i}", T0)
    window = history_window(session.messages, CONFIG)
    assert window.note is not None and len(window.older) == 10 and len(window.recent) == 5
    assert history_context(session.messages, CONFIG).startswith("[先前討論已寫入記憶] 摘要：X\n\n")
    chat = history_chat_messages(window)
    assert chat[0] == {"role": "user", "content": "[先前討論已寫入記憶] 摘要：X"}
    assert chat[1] == {"role": "assistant", "content": "[Old] m5"}
    assert chat[-1] == {"role": "assistant", "content": "m19"}


def test_dynamic_summary_triggers() -> None:
    def m(text: str, role: str = "user") -> Message:
        return Message(role, text, T0)

    assert needs_summary(m("我們決定用 Postgres"), CONFIG)
    assert needs_summary(m("下一步是寫測試"), CONFIG)
    assert needs_summary(m("TODO: docs"), CONFIG)
    assert needs_summary(m("這個優先處理"), CONFIG)
    assert needs_summary(m("- a\n- b\n- c"), CONFIG)
    assert needs_summary(m("```py\nprint(1)\n```"), CONFIG)
    assert needs_summary(m("total 0", role="tool"), CONFIG)
    assert needs_summary(m("One. Two. Three. Four. Five. Six. Seven."), CONFIG)
    assert needs_summary(m("\n".join(f"line {i}" for i in range(11))), CONFIG)
    assert not needs_summary(m("One. Two. Three."), CONFIG)
    assert not needs_summary(m("你好，今天天氣不錯"), CONFIG)
    assert not needs_summary(m("ok"), CONFIG)


class FixedLLM:
    """Stands in for the agent's LLM summarizer (the real one talks to Ollama)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return self.answer


class DownLLM:
    async def summarize(self, request: SummaryRequest) -> str:
        raise ConnectionError("Ollama is not running")


async def test_fill_summaries_summarises_only_triggered_older_messages() -> None:
    session = conversation(20)
    session.messages[7] = Message("assistant", "我們決定下週一上線，TODO: 寫 release note", T0)
    llm = FixedLLM("Goal: 上線\nDecision: 下週一上線\nTodo: 寫 release note\nFacts: -")
    made = await fill_summaries(session, SummaryService(llm), CONFIG)
    assert made == 1 and len(llm.requests) == 1
    assert (
        session.messages[7].summary
        == "Goal: 上線 | Decision: 下週一上線 | Todo: 寫 release note | Facts: -"
    )
    assert "AI[Summary]: Goal: 上線" in history_context(session.messages, CONFIG)
    assert await fill_summaries(session, SummaryService(llm), CONFIG) == 0  # already done


async def test_without_an_llm_the_extractive_summary_keeps_the_format() -> None:
    long = (
        "We decided to move the bot to the NUC. 下一步：明天把 systemd unit 裝好。"
        "The budget is 3000 元 and Alice handles DNS. " * 6
    )
    for service in (
        SummaryService(None),
        SummaryService(DownLLM()),
        SummaryService(FixedLLM("sure!")),
    ):
        summary = await service.message_summary(Message("user", long, T0), 280)
        assert len(summary) <= 280
        fields = parse_structured(summary)
        assert fields is not None and list(fields) == list(FIELDS)
        assert "decided" in fields["Decision"] and "明天" in fields["Todo"]


def test_render_structured_shares_the_room() -> None:
    text = render_structured({"Goal": "g" * 500, "Decision": "d", "Todo": "t" * 300}, 280)
    assert len(text) <= 280
    assert "Decision: d |" in text and "Facts: -" in text
    assert text.count("…") == 2
