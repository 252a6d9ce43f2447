"""A bug nobody foresaw, on a path that masks, costs one sentence: never the path, never data.

The half-said secrets of issue 28 took whole paths down; the masker is fixed at its root, and
these boundaries keep the next unknown bug from doing the same. Each test makes one step of
PCAI fail as a bug would (``RuntimeError`` from the step, injected with monkeypatch: no
behaviour is imitated), and checks what the person gets: the message keeps its crash record
(its text withheld, never stored unmasked), the terminal chat says one sentence and goes on,
``pcai remember`` prints one line and no traceback, and the log keeps the traceback.
"""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path
from typing import NoReturn

import pytest

from agent.texts import say
from bot.app import Services
from bot.cli import main
from bot.telegram import queues
from bot.telegram.open_turns import OpenTurns
from bot.telegram.queues import UserQueues
from memory.api import Memory
from memory.base.guards import REDACTED
from memory.write.decisions import ConfirmationService
from tests.bot.conftest import OWNER
from tests.bot.test_half_said_secrets import _update


def _bug(*_args: object, **_kwargs: object) -> NoReturn:
    raise RuntimeError("a bug nobody foresaw")


async def test_a_message_the_masker_fails_on_keeps_its_record_withheld(
    services: Services, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(queues, "mask", _bug)
    turns = OpenTurns(services.state)
    processor = UserQueues(turns, allowed=frozenset({OWNER}))
    done = asyncio.Event()
    await processor.process_update(_update(1, "text", "my password is hunter22"), done.wait())
    await asyncio.sleep(0.2)
    [kept] = turns.left()
    assert kept.payload["message"]["text"] == REDACTED  # kept, and nothing unmasked on disk
    assert any(r.exc_info for r in caplog.records if "could not mask" in r.getMessage())
    done.set()


def test_pcai_remember_says_one_line(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(Memory, "remember", _bug)
    assert main(["remember", "--user", "alice", "I like green tea"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1:] == [
        "pcai: remember stopped on an error of ours (RuntimeError); "
        "PCAI_LOG_LEVEL=DEBUG shows where"
    ]
    assert "Traceback" not in err


def test_the_terminal_chat_says_one_sentence_and_goes_on(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(ConfirmationService, "propose", _bug)
    lines = "/remember I like green tea\n/remember I like jasmine tea\n/help\n/quit\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    with caplog.at_level(logging.DEBUG, logger="bot.chat"):
        assert main(["chat", "--user", "alice"]) == 0
    out, err = capsys.readouterr()
    assert out.count(say("failed", "en")) == 2 and "/remember" in out  # then /help answered
    assert "Traceback" not in err
    assert [r for r in caplog.records if r.exc_info and r.name == "bot.chat"]
