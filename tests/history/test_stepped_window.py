"""The window in steps (docs/prompt.md): appended between rebuilds, 15/5 at each rebuild."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from history.compaction import Compactor
from history.config import HistoryConfig
from history.context import (
    WINDOW_STEP,
    history_chat_messages,
    history_window,
    stepped_window,
)
from history.sessions import KIND_COMPACTION, Message, Session
from history.summarize import SummaryService
from tests.history.conftest import HistoryKit

T0 = datetime(2026, 2, 8, 9, 0, tzinfo=UTC)
CONFIG = HistoryConfig()


def say(session: Session, i: int) -> None:
    """Message ``i``: the user's on even numbers, the assistant's on odd ones."""
    role = "user" if i % 2 == 0 else "assistant"
    session.append(role, f"message {i} 第{i}則", T0 + timedelta(minutes=i))


def body(session: Session) -> list[Message]:
    """The history before the message being answered, compaction notes aside."""
    return [m for m in session.messages[:-1] if m.kind != KIND_COMPACTION]


def test_turns_append_between_rebuilds_and_each_rebuild_is_the_15_5_window() -> None:
    session = Session("cli_t")
    previous: list[dict[str, str]] = []
    rebuilt_at = []
    for i in range(0, 80):
        say(session, i)
        if i % 2:  # prompts are built for the user's messages
            continue
        before = session.window_from
        window = stepped_window(session, CONFIG)
        chat = history_chat_messages(window)
        if session.window_from != before:
            rebuilt_at.append(len(body(session)))
            plain = history_window(body(session), CONFIG)
            assert window == plain  # the 15/5 window exactly
            n = len(body(session))
            assert len(window.older) == min(10, n - 5) and len(window.recent) == 5
        elif i:  # the prompt before is this one's prefix: only the new turn was added
            assert chat[: len(previous)] == previous and len(chat) == len(previous) + 2
        previous = chat
    assert rebuilt_at == list(range(WINDOW_STEP, 80, WINDOW_STEP))


def test_the_step_survives_a_restart() -> None:
    session = Session("cli_t")
    for i in range(WINDOW_STEP + 5):
        say(session, i)
    stepped_window(session, CONFIG)
    again = Session.from_json(session.to_json())
    assert again.window_from == session.window_from == WINDOW_STEP + 4
    assert stepped_window(again, CONFIG) == stepped_window(session, CONFIG)


async def test_a_compaction_trim_rebuilds_the_window_from_what_it_kept(kit: HistoryKit) -> None:
    session = Session("telegram_42")
    for i in range(30):  # 15 user turns, the last one answered (the worker trims after it)
        say(session, i)
    compactor = Compactor(
        kit.library.data_dir, SummaryService(None), kit.library.counter, CONFIG, kit.daily_log
    )
    result = await compactor.compact(session, "telegram_42", T0 + timedelta(hours=1))
    assert result is not None
    kept = [m for m in session.messages if m.kind != KIND_COMPACTION]
    assert 0 < len(kept) < 30
    say(session, 30)  # the next message
    window = stepped_window(session, CONFIG)
    assert session.window_from == len(kept)
    assert window.note is not None and window == history_window(session.messages[:-1], CONFIG)
