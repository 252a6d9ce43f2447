"""No turn is lost: kill -9 or SIGTERM while the model is answering, then a restart.

python-telegram-bot confirms an update to Telegram (the next ``getUpdates`` offset) as soon as
it has fetched it, so after a crash Telegram never sends it again. The bot keeps each message
in ``open_turns`` (pcai.db) until it is handled; the next process answers it exactly once, or,
when it is too old to answer now, tells its sender in one sentence.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory.base.db import connect
from memory.base.logs import parse_log
from memory.config import state_db_path
from tests.e2e.conftest import ALICE, MODES
from tests.e2e.harness import TOKEN, BotProcess, Emulator, User
from tests.e2e.test_conversation import wait_until
from tests.fakes.ollama_server import FakeOllama

QUESTION = "明天早上幾點出發去機場比較好？"
ANSWER = "七點出發剛好。"


class StuckModel:
    """Answers at once, except that it hangs on ``QUESTION`` while ``stuck`` is set."""

    def __init__(self) -> None:
        self.stuck = threading.Event()
        self.release = threading.Event()

    def unstick(self) -> None:
        """Answer every later call at once and let the hanging one go."""
        self.stuck.clear()
        self.release.set()

    def __call__(self, body: dict[str, Any]) -> str:
        asked = json.dumps(body.get("messages", [])[-1:], ensure_ascii=False)
        if QUESTION in asked and self.stuck.is_set():
            self.release.wait(60)
        return ANSWER if QUESTION in asked else "好的。"


def _asked(ollama: FakeOllama, since: int = 0) -> int:
    return sum(
        QUESTION in json.dumps(r.get("messages", [])[-1:], ensure_ascii=False)
        for r in ollama.chat_requests[since:]
    )


def _answers(alice: User) -> list[str]:
    alice.drain(1.5)
    return [m["text"] for m in alice.inbox if m.get("text") == ANSWER]


def _alice_on_a_stuck_model(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> tuple[StuckModel, BotProcess, User]:
    """The bot on a model hanging on ``QUESTION`` until released, and Alice to send it."""
    model = StuckModel()
    ollama.chat_handler = model
    model.stuck.set()
    return model, start_bot(), User(emulator, ALICE, "Alice")


def _kill_while_the_model_answers(bot: BotProcess, ollama: FakeOllama, model: StuckModel) -> None:
    wait_until(lambda: _asked(ollama) >= 1, timeout=30)
    assert bot.proc is not None
    bot.proc.kill()  # kill -9: no flush, no goodbye
    bot.proc.wait(10)
    model.unstick()


@pytest.mark.parametrize("mode", MODES)
def test_a_message_in_hand_at_kill_9_is_answered_once_after_the_restart(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> None:
    model, bot, alice = _alice_on_a_stuck_model(emulator, ollama, start_bot)
    alice.send(QUESTION)
    _kill_while_the_model_answers(bot, ollama, model)
    asked_before = len(ollama.chat_requests)
    assert _answers(alice) == []  # the first process never answered

    second = start_bot()
    alice.wait_text(ANSWER, timeout=30)
    assert _answers(alice) == [ANSWER]
    assert _asked(ollama, asked_before) == 1
    # Handled means closed: a third process has nothing left to answer.
    assert second.terminate() == 0
    start_bot()
    assert _answers(alice) == [ANSWER]
    assert _asked(ollama, asked_before) == 1


def _logged(data: Path, user_id: int, text: str) -> list[str]:
    """The refs of the records of ``text`` in every day's log of the user."""
    logs = data / "users" / f"telegram_{user_id}" / "memory"
    return [
        r.ref
        for f in sorted(logs.glob("*.md"))
        for r in parse_log(f.stem, f.read_text(encoding="utf-8"))
        if r.text == text
    ]


def test_a_message_answered_after_kill_9_is_in_the_days_log_once(
    emulator: Emulator,
    ollama: FakeOllama,
    start_bot: Callable[[], BotProcess],
    tmp_path: Path,
) -> None:
    """The first process logged the message before it died; the replay must not log it again
    (on the old code the day's log held it twice with the same ``{#id}``)."""
    data = tmp_path / "botmemory"
    model, bot, alice = _alice_on_a_stuck_model(emulator, ollama, start_bot)
    alice.send(QUESTION)
    wait_until(lambda: len(_logged(data, ALICE, QUESTION)) == 1, timeout=30)
    _kill_while_the_model_answers(bot, ollama, model)

    asked_before = len(ollama.chat_requests)
    second = start_bot()
    alice.wait_text(ANSWER, timeout=30)
    assert second.terminate() == 0  # every write of the replayed turn is done
    # The replayed turn asked the model once, with the message once in its prompt.
    prompts = [json.dumps(r["messages"], ensure_ascii=False) for r in ollama.chat_requests]
    assert [p.count(QUESTION) for p in prompts[asked_before:]] == [1]
    refs = _logged(data, ALICE, QUESTION)
    assert len(refs) == 1 and refs[0], refs
    assert _answers(alice) == [ANSWER]


def test_a_message_too_old_to_answer_gets_one_sentence_after_the_restart(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> None:
    model, bot, alice = _alice_on_a_stuck_model(emulator, ollama, start_bot)
    sent = int(time.time()) - 600  # the phone was offline: it reaches the bot 10 minutes late
    emulator.call(
        "sendMessage",
        {
            "botToken": TOKEN,
            "from": {"id": ALICE, "is_bot": False, "first_name": "Alice"},
            "chat": {"id": ALICE, "type": "private", "first_name": "Alice"},
            "date": sent,
            "text": QUESTION,
        },
    )
    _kill_while_the_model_answers(bot, ollama, model)
    asked_before = len(ollama.chat_requests)

    start_bot()
    told = alice.wait_text("之前停止了", timeout=30)["text"]
    assert time.strftime("%H:%M", time.localtime(sent)) in told and QUESTION[:10] in told
    alice.drain(1.5)
    assert [m for m in alice.inbox if "之前停止了" in (m.get("text") or "")] == [
        m for m in alice.inbox if m["text"] == told
    ]
    assert len([m for m in alice.inbox if m["text"] == told]) == 1
    assert _asked(ollama, asked_before) == 0  # not answered late
    assert _answers(alice) == []


@pytest.mark.parametrize("mode", MODES)
def test_sigterm_while_the_model_hangs_exits_in_seconds_and_the_restart_answers(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[[], BotProcess]
) -> None:
    model, bot, alice = _alice_on_a_stuck_model(emulator, ollama, start_bot)
    alice.send(QUESTION)
    wait_until(lambda: _asked(ollama) >= 1, timeout=30)
    began = time.monotonic()
    assert bot.terminate(timeout=30) == 0
    stopped_in = time.monotonic() - began
    assert stopped_in < 10.0, f"SIGTERM took {stopped_in:.1f} s"  # termination check
    model.unstick()

    start_bot()
    alice.wait_text(ANSWER, timeout=30)
    assert _answers(alice) == [ANSWER]


def test_sigterm_while_the_worker_indexes_a_long_message_exits_in_seconds(
    emulator: Emulator, ollama: FakeOllama, start_bot: Callable[..., BotProcess], tmp_path: Path
) -> None:
    """A 20,000-character message leaves the worker embedding its log lines in a thread for
    tens of seconds (on the old code SIGTERM waited them out: 32 s measured). The stop does
    not wait for that thread: the process ends in seconds; the work stays queued."""
    ollama.chat_handler = lambda body: "好的。"
    bot = start_bot()
    alice = User(emulator, ALICE, "Alice")
    long = "".join(
        f"第{n}天：我們沿著海岸線騎車，經過漁港、稻田和老街，晚上住在民宿。" for n in range(700)
    )
    alice.send(long[:20_000])
    alice.wait_text("你的訊息太長", timeout=60)  # kept and logged whole; the model never sees it
    began = time.monotonic()
    assert bot.terminate(timeout=120) == 0
    stopped_in = time.monotonic() - began
    assert stopped_in < 10.0, f"SIGTERM took {stopped_in:.1f} s"  # termination check
    conn = connect(state_db_path(tmp_path / "botmemory"))
    try:
        kinds = [r[0] for r in conn.execute("SELECT kind FROM deferred_work")]
    finally:
        conn.close()
    print(f"stop: {stopped_in:.2f} s; still queued: {kinds}")
