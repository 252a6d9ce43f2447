"""A group chat's turn: the chat's own session; no memory, no tools, no user's file touched."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agent.errors import LLMError, log_llm_failure
from agent.prompt import turn_messages
from agent.selection import Selection
from agent.streaming import StreamGuard
from agent.textcalls import extract_text_calls
from agent.texts import say
from agent.tools import SCHEMAS, ToolBox
from agent.turn.llm import ask, failure_reply
from agent.types import IncomingMessage, Reply, StepClock
from history.context import WINDOW_STEP, fill_summaries
from history.sessions import ROLE_ASSISTANT, ROLE_USER, Session
from memory.base.guards import mask

if TYPE_CHECKING:
    from agent.pipeline import Agent

log = logging.getLogger(__name__)


async def group_turn(
    agent: Agent,
    message: IncomingMessage,
    session: Session,
    lang: str,
    clock: StepClock,
    guard: StreamGuard | None = None,
) -> Reply:
    """Answer a group message from the group's own conversation alone."""
    with clock.step("3 append"):
        known = agent.said.of(session.id)  # said in this group so far, this message too
        session.append(ROLE_USER, mask(message.text), message.time, msg_id=message.message_id)
        # No compaction here (it writes someone's MEMORY_FULL.md and daily log): the group
        # keeps only what its history window can show, trimmed when the window is rebuilt.
        if len(session.messages) - 1 - session.window_from >= WINDOW_STEP:
            del session.messages[: -agent.history.max_history]
    with clock.step("8 prompt"):
        await fill_summaries(session, agent.message_summaries, agent.history, upto=-1)
        messages = turn_messages(
            now=message.time,
            language=lang,
            selection=Selection(),
            session=session,
            history=agent.history,
            counter=agent.counter,
            user_text=message.text,
            group=True,
        )
    with clock.step("9 llm"):
        try:
            no_tools, who = ToolBox({}), session.id
            resp = await ask(
                agent.llm, messages, no_tools, agent.counter, agent.fit, who, stream=guard
            )
        except LLMError as exc:
            log_llm_failure(log, session.id, exc)
            return Reply(failure_reply(exc, lang), error=True)
    # No tools in a group: a call the model writes as text is cut, never shown raw.
    text = extract_text_calls(resp.content, SCHEMAS).content.strip()
    text = mask(text or say("tools_exhausted", lang), known)
    with clock.step("10 save reply"):
        session.append(ROLE_ASSISTANT, text, message.time)
    return Reply(text=text)
