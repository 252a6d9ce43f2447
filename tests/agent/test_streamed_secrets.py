"""Streaming shows only what the final message shows (issue 28): no draft holds a secret.

On the code before, a quoted pass-phrase longer than the 48-character hold-back showed as
``Your Wi-Fi password is "correct horse``, a pass-phrase the person said, echoed bare, as
``Noted. correct horse``, a URL password with dots as ``https://bob:hunter.``; the final
message masked them, the draft had shown them.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings

from tests.agent.conftest import Env
from tests.agent.secret_replies import (
    SecretReply,
    chunk_sizes,
    leaks,
    secret_replies,
    stream,
)


@settings(max_examples=300, deadline=None)
@given(case=secret_replies(), sizes=chunk_sizes)
def test_every_shown_text_is_a_start_of_the_final_message(
    case: SecretReply, sizes: list[int]
) -> None:
    shown: list[str] = []

    async def sink(text: str) -> None:
        shown.append(text)

    asyncio.run(stream(case, sizes, sink))
    final = case.final
    for text in shown:
        assert leaks(case, text) == [], text
        assert final.startswith(text), (text, final)


EXAMPLES = [
    # The issue's three, longer than the hold-back.
    (
        "",
        'Your Wi-Fi password is "correct horse battery staple purple monkey dishwasher '
        'lantern". The router is in the hall cupboard, next to the fuse box.',
        "correct",
    ),
    (
        'my passphrase is "correct horse battery staple purple monkey dishwasher lantern"',
        "Noted. correct horse battery staple purple monkey dishwasher lantern, and I will "
        "not keep it anywhere.",
        "correct",
    ),
    (
        "",
        "Use https://bob:hunter.correct.horse.battery.staple.longer.than.the.hold@db.example"
        ".org/main to connect, then restart the service and wait a minute.",
        "hunter",
    ),
    (
        "",
        "好的。你的密碼是「我家小狗的名字加上牠的生日再加上我們第一次見面的地方和那天的天氣」，"
        "我不會記下來，請放心，也請不要在群組裡說出來喔。",
        "小狗",
    ),
]


async def test_the_issues_drafts_hold_no_secret() -> None:
    for said, reply, mark in EXAMPLES:
        case = SecretReply(said, reply, (mark,))
        for size in (1, 2, 3, 5, 8):
            shown: list[str] = []

            async def sink(text: str, shown: list[str] = shown) -> None:
                shown.append(text)

            await stream(case, [size], sink)
            assert shown, reply  # the reply did stream
            assert mark not in case.final
            assert not any(mark in text for text in shown), (size, shown)


async def test_a_secret_said_turns_before_is_masked_when_echoed_bare(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agent.streaming._RESCAN_SECONDS", 0.0)  # a check every few pieces
    phrase = "correct horse battery staple purple monkey dishwasher lantern"
    env.fake.queue_chat("Got it, I will not keep that anywhere.")
    await env.agent.respond(env.msg(f'my wifi password is "{phrase}"'))
    env.fake.queue_chat(
        f"Noted. {phrase}, and the router is in the hall cupboard, next to the fuse box, "
        "where you said it was when we talked about the move last week."
    )
    seen: list[str] = []

    async def sink(text: str) -> None:
        seen.append(text)

    reply = await env.agent.respond(env.msg("what did I tell you an hour ago?"), sink)
    assert "correct horse" not in reply.text and "[REDACTED]" in reply.text
    assert seen and "[REDACTED]" in seen[-1] and reply.text.startswith(seen[-1])
    assert not any("correct" in text for text in seen)
    # The model was never shown it again: the session keeps the message masked.
    assert phrase not in str(env.fake.chat_requests[-1]["messages"])


def test_said_secrets_are_kept_per_conversation_and_dropped_by_new() -> None:
    from agent.said import SaidSecrets  # here: the tests above run on the code before it too

    said = SaidSecrets(sessions=2, values=2)
    assert said.add("a", 'my password is "correct horse"') == {"correct horse"}
    said.add("a", "my PIN is 4829")
    assert said.add("a", "api key: sk-test-abcdefghijklmnopqrstuvwxyz") == {
        "4829",
        "sk-test-abcdefghijklmnopqrstuvwxyz",
    }  # the ones said lately
    said.add("b", "nothing secret here")
    assert said.of("b") == frozenset() and said.of("a")
    said.add("c", "my password is hunter22")
    assert said.of("a") == frozenset()  # the conversation seen longest ago goes first
    said.forget("c")
    assert said.of("c") == frozenset()
