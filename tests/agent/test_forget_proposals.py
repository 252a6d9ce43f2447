"""A proposal a forget touched never becomes a memory, and no memory is made of the marker.

The world machine found it (tests/world, "delete all"): a proposal waiting when the person
forgot a memory it copied had that copy blanked to ``[forgotten]`` (the forget redacts every
copy, pending rows too) and stayed confirmable, so confirming it wrote a memory whose text was
the marker: a memory made of a forgotten one, and content that reads as the bot's own
structure. Now the forget takes such a proposal back (``/undo`` of the forget gives it back as
it was), and a text holding the marker is never proposed (the model may copy it from a
redacted history line) nor becomes a proposal's new text.
"""

from __future__ import annotations

import pytest

from bot.frontdesk.backend import backend_for
from bot.frontdesk.desk import Desk
from bot.frontdesk.ports import BackendError
from memory.base.guards import FORGOTTEN
from tests.agent.conftest import USER, Env
from tests.fakes.ollama_server import tool_reply

TEA = "I like green tea"
# Each waits while TEA is confirmed: the same words again, or TEA with more said after it.
COPIES = (TEA, "I like green tea api key = `", "I like green tea 🍵🍵")
OTHER = "My sister lives in Lyon"


def _texts(env: Env) -> list[str]:
    return [e.text for e in env.services.memory.entries(USER)]


async def test_a_proposal_a_forget_blanked_is_taken_back_and_undo_gives_it_back(env: Env) -> None:
    backend = backend_for(env.services)
    desk = Desk(backend)
    first = backend.propose(USER, TEA, env.clock)
    copies = [backend.propose(USER, t, env.clock) for t in COPIES]
    other = backend.propose(USER, OTHER, env.clock)
    kept = backend.decide(USER, first.proposal_id, "confirm", via="button")
    assert kept.status == "confirmed"

    assert not (await desk.command(USER, "forget", kept.entry_id, "en")).error
    waiting = {p.proposal_id: p.text for p in backend.pending(USER)}
    # Only the proposal the forget did not touch still waits, its text whole.
    assert waiting == {other.proposal_id: OTHER}
    for p in copies:  # a button pressed on an old card: gone, nothing saved
        outcome = backend.decide(USER, p.proposal_id, "confirm", via="button")
        assert outcome.status == "missing", (p.text, outcome)
    assert not any(FORGOTTEN in t for t in _texts(env)), _texts(env)
    assert _texts(env) == []

    # /undo of the forget: the memory and the proposals, as they were before it.
    assert not (await desk.command(USER, "undo", "", "en")).error
    assert _texts(env) == [TEA]
    waiting = {p.proposal_id: p.text for p in backend.pending(USER)}
    assert waiting == {p.proposal_id: p.text for p in (*copies, other)}


@pytest.mark.parametrize("text", [FORGOTTEN, f"{FORGOTTEN} api key = `", "I like [Forgotten] tea"])
async def test_a_text_holding_the_marker_is_never_proposed(env: Env, text: str) -> None:
    backend = backend_for(env.services)
    # typed (/remember): refused in one sentence, in the reader's language
    with pytest.raises(BackendError) as refused:
        backend.propose(USER, text, env.clock)
    assert "[forgotten]" in refused.value.said("en")
    assert refused.value.said("zh") != refused.value.said("en")
    answer = await Desk(backend).command(USER, "remember", text, "en")
    assert answer.error and not answer.proposals
    # a proposal's new text
    waiting = backend.propose(USER, OTHER, env.clock)
    with pytest.raises(BackendError):
        backend.edit(USER, waiting.proposal_id, text, via="edit")
    assert [p.text for p in backend.pending(USER)] == [OTHER]
    # the model copying a redacted history line into memory_save
    env.fake.queue_chat(tool_reply("memory_save", text=text), "Noted.")
    reply = await env.agent.respond(env.msg("what do I like?", message_id="7"))
    assert not reply.proposals
    assert [p.text for p in backend.pending(USER)] == [OTHER]
    assert _texts(env) == []


async def test_the_marker_in_a_message_is_only_a_message(env: Env) -> None:
    """A person who types the marker in chat gets an ordinary answer, logged as they said it."""
    env.fake.queue_chat("Those brackets mark what you asked me to forget.")
    reply = await env.agent.respond(env.msg(f"what does {FORGOTTEN} mean?", message_id="8"))
    assert reply.text == "Those brackets mark what you asked me to forget."
    assert not reply.proposals
