"""A secret cut after its opening quote, on the chat's paths: each answers, loses nothing.

``my password is "`` made the masker raise (issue 28, item 2), and every path that masks went
down with it on main: a Telegram message or caption lost its crash-recovery record and got
"something went wrong", ``/remember`` failed, ``pcai remember`` and ``pcai chat`` printed a
traceback. Each path gets the half-said secrets in the languages the guard reads and answers
them as the text they are (nothing follows the quote: nothing is a secret yet). The page's
paths are in tests/web/test_import_edges.py.
"""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from typing import Any

import pytest
from telegram import Update

from agent.texts import say
from bot.app import Services
from bot.cli import main
from bot.telegram.open_turns import OpenTurns
from bot.telegram.queues import UserQueues
from tests.bot.conftest import OWNER, Harness

HALF_SAID = (
    'my password is "',
    "密碼是「",
    'PIN: "',
    "api key = `",
    "wifi password «",
    "我的 WiFi 密碼：『",
    "das Passwort lautet „",
    "mot de passe : « ",
    "token: '",
)
# Memories unlike each other (similar ones would wait as "add or replace?"), each ending in
# a half-said secret: the crash needed the quote at the end of the text.
FACTS = (
    "I water the tomatoes every Sunday morning",
    "我女兒每週三下午學鋼琴",
    "The dentist appointment moved to the ninth of May",
    "Our neighbour Klaus walks his beagle at seven",
    "I prefer window seats on long flights",
    "公司的年終聚餐在信義區的餐廳",
    "Mein Bruder wohnt seit April in Hamburg",
    "Le marché du samedi ouvre à huit heures",
    "The bike needs new brake pads before the trip",
)
SAID = [f"{fact}, {half}" for fact, half in zip(FACTS, HALF_SAID, strict=True)]


def _update(update_id: int, field: str, text: str) -> Update:
    message: dict[str, Any] = {
        "message_id": update_id,
        "date": int(time.time()),
        "chat": {"id": OWNER, "type": "private"},
        "from": {"id": OWNER, "is_bot": False, "first_name": "u", "language_code": "en"},
        field: text,
    }
    if field == "caption":
        message["photo"] = [{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}]
    return Update.de_json({"update_id": update_id, "message": message}, None)


@pytest.mark.parametrize("field", ["text", "caption"])
async def test_a_message_or_caption_keeps_its_crash_record(services: Services, field: str) -> None:
    turns = OpenTurns(services.state)
    processor = UserQueues(turns, allowed=frozenset({OWNER}), flood_limit=len(HALF_SAID) + 1)
    done = asyncio.Event()  # each turn waits: its row must be there meanwhile
    for n, text in enumerate(HALF_SAID, start=1):
        await processor.process_update(_update(n, field, text), done.wait())
    await asyncio.sleep(0.2)
    assert [t.payload["message"][field] for t in turns.left()] == list(HALF_SAID)
    done.set()
    await asyncio.sleep(0.2)
    assert turns.left() == []  # handled: the rows are gone


async def test_a_message_and_a_remember_are_answered(tg: Harness) -> None:
    assert tg.model is not None
    for n, text in enumerate(HALF_SAID):
        tg.model.queue_chat(f"Noted ({n}).")
        await tg.send(OWNER, text)
        await tg.send(OWNER, f"/remember {SAID[n]}")
    sent = tg.api.texts()
    assert say("error", "en") not in sent
    assert [t for t in sent if t.startswith("Noted")] == [f"Noted ({n})." for n in range(9)]
    remembered = [e.text for e in tg.services.memory.entries(f"telegram_{OWNER}")]
    assert sorted(remembered) == sorted(s.strip() for s in SAID)


def test_pcai_remember_answers_them(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for text in SAID:
        assert main(["remember", "--user", "alice", text]) == 0
    out, err = capsys.readouterr()
    assert out.count("remembered m-") == len(SAID) and "Traceback" not in err


def test_pcai_chat_answers_them(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = "".join(
        f"{half}\n/remember {said}\n" for half, said in zip(HALF_SAID, SAID, strict=True)
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(lines + "/quit\n"))
    assert main(["chat", "--user", "alice"]) == 0
    out, err = capsys.readouterr()
    assert out.count("✅") == len(SAID) and "Traceback" not in err  # each remembered
    assert say("failed", "en") not in out and say("failed", "zh") not in out
