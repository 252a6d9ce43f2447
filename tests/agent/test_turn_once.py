"""A turn's side effects happen once, and the person's message is never cut to nothing.

Over HTTP against the fake OpenAI-compatible server (llama.cpp's flavour): a round refused
with HTTP 400 "exceeds the available context size" is asked again, and no tool of any kind
runs twice for it; the retry carries the user's whole message; a message that cannot fit is
answered with one sentence instead of being sent as ``''``; the same message answered again
(the next process replaying it after a crash) proposes nothing twice.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

import pytest

from agent.openai_client import OpenAIChat
from agent.prompt import turn_message
from agent.reminders.store import PROPOSED
from agent.tools import SCHEMAS
from agent.turn.tools import TurnTools
from bot.app import build_agent
from tests.agent.conftest import USER, Env
from tests.fakes.openai_server import TOO_LONG, FakeOpenAI
from tests.fakes.tool_replies import tool_reply

WORDS = "the quick brown fox jumps over the lazy dog near the river bank today "
ASKED = "Please look after this for me: my sister Anna lives in Lyon, call her Friday."
DONE = "Done: it waits for your answer."


def _when() -> str:
    """A time the day after tomorrow, as the model writes it (naive: the user's zone)."""
    day = datetime.now() + timedelta(days=2)
    return day.replace(hour=9, minute=0, second=0, microsecond=0).isoformat()


# Each tool of agent/tools.py: the TurnTools method that runs it and a call's arguments.
# A new tool fails the parametrized test below until it is added here.
CALLS: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "memory_save": ("save", lambda: {"text": "My sister Anna lives in Lyon"}),
    "memory_search": ("search", lambda: {"query": "sister Lyon"}),
    "memory_archaeology": ("archaeology", lambda: {"topic": "family:sister"}),
    "reminder_create": ("reminder_create", lambda: {"when": _when(), "text": "call Anna"}),
}


@pytest.fixture
def openai_env(env: Env) -> Iterator[tuple[Env, FakeOpenAI]]:
    """The agent (its prompts sized to an 8192-token context) over the fake OpenAI server."""
    fake = FakeOpenAI(model="m")
    env.agent.llm = OpenAIChat(fake.url, "m")
    assert env.agent.fit is not None
    yield env, fake
    fake.stop()


def _said(body: Mapping[str, Any]) -> str:
    """The user's message as one request carried it (its last user turn)."""
    turns = [m for m in body["messages"] if m["role"] == "user"]
    return turn_message(str(turns[-1]["content"]))


def _runs(monkeypatch: pytest.MonkeyPatch, method: str) -> list[dict[str, Any]]:
    """The arguments of each run of a TurnTools handler (it still does its real work)."""
    runs: list[dict[str, Any]] = []
    real: Callable[[TurnTools, dict[str, Any]], Awaitable[Mapping[str, Any]]]
    real = getattr(TurnTools, method)

    async def counted(self: TurnTools, args: dict[str, Any]) -> Mapping[str, Any]:
        runs.append(args)
        return await real(self, args)

    monkeypatch.setattr(TurnTools, method, counted)
    return runs


def _waiting(env: Env) -> tuple[int, int]:
    """How many memory proposals and reminder proposals wait for the user."""
    reminders = env.services.reminders
    assert reminders is not None
    rows = reminders.store.of_user(USER, (PROPOSED,))
    return len(env.services.confirm.pending(USER, env.clock)), len(rows)


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
async def test_a_round_refused_as_too_long_runs_no_tool_twice(
    openai_env: tuple[Env, FakeOpenAI], monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    env, fake = openai_env
    for i in range(4):  # an earlier conversation: what the retry can cut
        await env.agent.respond(env.msg(f"turn {i}: " + WORDS * 12))
    method, arguments = CALLS[tool]
    runs = _runs(monkeypatch, method)
    call = tool_reply(tool, **arguments())
    fake.requests.clear()
    # Round 1 calls the tool; round 2 is refused (HTTP 400); asked again, the model calls
    # the same tool again, then answers.
    fake.queue_chat(call, TOO_LONG, call, DONE)
    reply = await env.agent.respond(env.msg(ASKED, message_id="41"))
    assert reply.text.startswith(DONE) and not reply.error  # (a save adds its "not yet")
    assert len(fake.requests) == 4
    assert len(runs) == 1, runs  # the tool ran once in the turn
    assert [_said(body) for body in fake.requests] == [ASKED] * 4  # never cut, never ''
    proposals, reminders = _waiting(env)
    assert proposals == len(reply.proposals) == (tool == "memory_save")  # one row, one card
    assert reminders == len(reply.reminders) == (tool == "reminder_create")


async def test_the_retry_after_a_refusal_keeps_the_message(
    openai_env: tuple[Env, FakeOpenAI],
) -> None:
    env, fake = openai_env
    fake.queue_chat("Here it is: " + WORDS * 25)  # a long answer earlier in the conversation
    await env.agent.respond(env.msg("tell me a long story"))
    fake.requests.clear()
    fake.queue_chat(TOO_LONG, "In Lyon, as you told me.")
    reply = await env.agent.respond(env.msg("Where does my sister live?"))
    assert reply.text == "In Lyon, as you told me." and not reply.error
    refused, retried = fake.requests
    assert fake.prompt_tokens(retried) < fake.prompt_tokens(refused)  # the history went
    assert _said(refused) == _said(retried) == "Where does my sister live?"


async def test_a_message_that_cannot_fit_is_told_in_one_sentence_not_sent(
    openai_env: tuple[Env, FakeOpenAI],
) -> None:
    env, fake = openai_env
    long = "Please read my notes carefully. " + WORDS * 800
    reply = await env.agent.respond(env.msg(long))
    assert reply.error and not fake.requests  # the model is not asked to answer a stub
    said = re.fullmatch(
        r"Sorry, your message is too long for this model's context: about ([\d,]+) characters "
        r"fit; your message is saved, please send a shorter one\.",
        reply.text,
    )
    assert said is not None
    assert 0 < int(said.group(1).replace(",", "")) < len(long)
    assert env.services.sessions.load(USER).messages[-1].content == long  # kept whole


async def test_the_same_message_answered_again_proposes_once(
    openai_env: tuple[Env, FakeOpenAI],
) -> None:
    env, fake = openai_env
    message = env.msg(ASKED, message_id="77")
    save = tool_reply("memory_save", text="My sister Anna lives in Lyon")
    remind = tool_reply("reminder_create", when=_when(), text="call Anna")
    fake.queue_chat(save, remind, DONE)
    first = await env.agent.respond(message)
    assert _waiting(env) == (1, 1)
    # The next process answers the same message again (kill -9 before the reply left): its
    # own agent, the same data.
    again = build_agent(env.services, OpenAIChat(fake.url, "m"))
    fake.queue_chat(save, remind, DONE)
    second = await again.respond(message)
    assert _waiting(env) == (1, 1)  # one proposal of each, not two
    assert [p.proposal_id for p in second.proposals] == [p.proposal_id for p in first.proposals]
    assert [r.reminder_id for r in second.reminders] == [r.reminder_id for r in first.reminders]
