"""What of a reply is shown while it is written (agent/streaming.py), alone and in a turn."""

from __future__ import annotations

import itertools
import json

import pytest

from agent.streaming import HOLD_CHARS, StreamGuard
from memory.base.guards import secrets_in
from tests.agent.conftest import Env
from tests.fakes.ollama_server import tool_reply

SAID = "my wifi password is hunter2-XYZ, the router is in the hall cupboard"
CALL = json.dumps(
    {"name": "memory_save", "arguments": {"text": "router in the hall cupboard"}},
    ensure_ascii=False,
)


class Seen:
    """A sink that keeps what the user would have seen."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    async def __call__(self, text: str) -> None:
        self.shown.append(text)


class Ticks:
    """A clock that moves a second each time it is read (the model writes slowly)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def guarded(seen: Seen, known: frozenset[str] = frozenset()) -> StreamGuard:
    """A guard over ``seen`` on a clock that lets every piece be checked."""
    return StreamGuard(seen, known, clock=Ticks())


async def feed(guard: StreamGuard, text: str, size: int = 3) -> None:
    """The model writes ``text`` a few characters at a time."""
    for i in range(0, len(text), size):
        await guard.piece(text[i : i + size])


async def test_shown_text_only_grows_and_holds_back_the_tail() -> None:
    seen = Seen()
    reply = (
        "好的，我們先看行程。" * 6 + "First the train, then the hotel, then dinner by the river."
    )
    await feed(guarded(seen), reply)
    assert seen.shown and all(b.startswith(a) for a, b in itertools.pairwise(seen.shown))
    assert reply.startswith(seen.shown[-1]) and len(seen.shown[-1]) <= len(reply) - HOLD_CHARS


async def test_a_long_reply_in_small_pieces_is_checked_a_few_times_not_each_piece() -> None:
    seen, checks = Seen(), []
    guard = StreamGuard(seen, clock=lambda: 0.0)  # all within one moment
    showable = guard.showable
    guard.showable = lambda raw: checks.append(1) or showable(raw)  # type: ignore[method-assign]
    await feed(guard, "內容" * 5000, size=4)
    assert len(checks) == 1  # not 2,500 times over a growing 10,000 characters


async def test_chinese_without_punctuation_streams_too() -> None:
    seen = Seen()
    await feed(
        guarded(seen),
        "我們明天早上先去車站買票然後搭第一班車去台南吃牛肉湯再去安平老街走走" * 2,
    )
    assert seen.shown and len(seen.shown[-1]) >= 12  # all but the held-back tail


async def test_a_secret_from_the_message_is_never_shown_not_even_in_part() -> None:
    seen = Seen()
    reply = "Sure. Your wifi password is hunter2-XYZ and the router is in the hall cupboard. " * 3
    await feed(guarded(seen, secrets_in(SAID)), reply, size=2)
    assert seen.shown and "[REDACTED]" in seen.shown[-1]
    for shown in seen.shown:
        assert "hunter" not in shown and "XYZ" not in shown


async def test_a_tool_call_written_as_json_is_never_shown() -> None:
    seen = Seen()
    guard = guarded(seen)
    await feed(
        guard, "好的，我幫你記下來，這要等你確認之後才會真的保存起來喔，請稍等一下。\n" + CALL
    )
    assert seen.shown  # the words before the call did show
    for shown in seen.shown:
        assert "{" not in shown and "memory_save" not in shown
    await guard.tool_round()  # the round ended in that call: its text is taken back
    assert seen.shown[-1] == ""


@pytest.fixture
def every_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn's guard checks the text every few characters, however fast the fake writes
    (the fake model streams its whole reply faster than the guard's 0.2 s between checks)."""
    monkeypatch.setattr("agent.streaming._RESCAN_SECONDS", 0.0)


@pytest.mark.usefixtures("every_piece")
async def test_a_turn_streams_masked_text_and_never_a_json_call(env: Env) -> None:
    seen = Seen()
    text_call = (
        f"好的，我把路由器的位置記下來了，等你確認就會保存，密碼就不記了。\n```json\n{CALL}\n```"
    )
    env.fake.queue_chat(
        text_call,
        "Noted. Your wifi password is hunter2-XYZ, and the router "
        "is in the hall cupboard; confirm the proposal to keep it.",
    )
    reply = await env.agent.respond(env.msg(SAID), seen)
    assert len(reply.proposals) == 1  # the call written as text was run, not shown
    assert "hunter2" not in reply.text and "[REDACTED]" in reply.text
    assert seen.shown
    for shown in seen.shown:
        assert "{" not in shown and "memory_save" not in shown and "hunter" not in shown
    assert reply.text.startswith(seen.shown[-1])  # the final message completes the last one


@pytest.mark.usefixtures("every_piece")
async def test_a_tool_round_takes_shown_text_back(env: Env) -> None:
    seen = Seen()
    env.fake.queue_chat(
        tool_reply(
            "memory_search",
            content="讓我先查一下你之前存過的筆記，看看有沒有提到這件事情的內容，"
            "查到之後我再告訴你路由器放在哪裡。如果筆記裡沒有，我會直接跟你說我不知道，不會亂猜。",
            query="router",
        ),
        "The router is in the hall cupboard, as you noted before.",
    )
    await env.agent.respond(env.msg("where is my router?"), seen)
    assert "" in seen.shown  # the tool round's words were taken back ("typing")
    assert "讓我先查" not in seen.shown[-1]
