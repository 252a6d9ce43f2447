"""Forget removes the copies of a memory and nothing else; /undo puts back all it changed.

The issue's own scene (issue 23, item 2): two memories said in chat, confirmed, recalled and
quoted; questions about them that are not copies. Forgetting must leave the questions whole;
undoing must give back the logs, the session, the topic line and the /why records.
"""

from __future__ import annotations

from pathlib import Path

from agent.build import agent_worker
from bot.frontdesk.backend import backend_for
from bot.frontdesk.desk import Desk
from tests.agent.conftest import USER, Env
from tests.fakes.ollama_server import tool_reply

TEA = "我每天早上喝烏龍茶"
ANNA = "my sister Anna's birthday is March 3"
QUESTIONS = ("我每天早上喝什麼？", "when is Anna's birthday?")


def _files(env: Env) -> dict[str, str]:
    """Every text file of the user (folder and session), by name."""
    data = env.services.settings.data_dir
    found = [p for p in (data / "users" / USER).rglob("*.md") if p.name != "MEMORY.md"]
    found += [p for p in (data / "history").glob(f"{USER}*.json")]
    return {str(p.relative_to(data)): Path(p).read_text(encoding="utf-8") for p in found}


async def _scene(env: Env) -> dict[str, str]:
    backend = backend_for(env.services)
    ids = {}
    for n, said in enumerate((TEA, ANNA)):
        env.fake.queue_chat(tool_reply("memory_save", text=said), "Shall I remember it?")
        reply = await env.agent.respond(env.msg(said, message_id=str(100 + n)))
        outcome = backend.decide(USER, reply.proposals[0].proposal_id, "confirm", via="button")
        ids[said] = outcome.entry_id
    worker = agent_worker(env.agent)
    env.fake.queue_chat("Your sister Anna's birthday is on March 3.")
    await env.agent.respond(env.msg(QUESTIONS[1], message_id="102"))
    for n in range(3):  # the tea's section becomes the topic: its line quotes the memory
        env.fake.queue_chat("你每天早上喝烏龍茶。")
        await env.agent.respond(env.msg(QUESTIONS[0], message_id=str(103 + n)))
    assert await worker.settle()
    return ids


async def test_forget_leaves_other_lines_whole_and_undo_restores_everything(env: Env) -> None:
    ids = await _scene(env)
    desk = Desk(backend_for(env.services))
    before = _files(env)
    why = env.agent.why_log.recent(USER)
    assert any(TEA in t for t in before.values()) and any(ANNA in t for t in before.values())
    assert TEA in before["users/cli_alice/MEMORY_TOPIC.md"]
    assert any(m.text == TEA for _, used in why for m in used)

    for entry_id in ids.values():
        assert not (await desk.command(USER, "forget", entry_id, "en")).error
    forgotten = _files(env)
    text = "\n".join(forgotten.values())
    assert TEA not in text and ANNA not in text and "烏龍茶" not in text
    assert "March 3" not in text  # the reply that quoted it is a copy
    for question in QUESTIONS:  # about the memories, not copies of them: left exactly
        assert question in text
    assert "我[forgotten]" not in text and "[forgotten]'s" not in text

    for _ in ids:
        assert not (await desk.command(USER, "undo", "", "en")).error
    assert _files(env) == before  # logs, session, topic line: as they were
    assert env.agent.why_log.recent(USER) == why
    assert {e.id for e in env.services.memory.entries(USER)} == set(ids.values())
