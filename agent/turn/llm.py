"""Step 9 of a turn: asking the model with a prompt that fits its context.

The prompt is cut to the context before it is sent (:func:`agent.context_fit.fit_messages`),
never the user's message: a message that does not fit alone is answered with one sentence
saying how much would (``message_too_long``), and the model is not asked. A server that
refuses a prompt anyway (our token count is not its tokenizer's) is asked once more, from
where the turn stands (the tool calls already run are kept, never run again), with the prompt
cut to half its size; when that fails too, the user is told in one sentence
(``context_full``) and the session's compaction is queued, keeping one turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from agent.context_fit import ContextFit, fit_messages, prompt_count, turn_index
from agent.deferred import KIND_COMPACT, Task, WorkQueue
from agent.errors import LLMContextError, LLMError, LLMUnavailableError, MessageTooLongError
from agent.llm import ChatMessage, LLMClient, LLMResponse
from agent.prompt import turn_message
from agent.streaming import StreamGuard
from agent.texts import say
from agent.tools import MAX_TOOL_ROUNDS, ToolBox, run_tool_loop
from agent.turn.work import compaction_task
from agent.types import IncomingMessage
from history.compaction import Compactor
from history.sessions import Session
from memory.base.tokens import TokenCounter

log = logging.getLogger(__name__)


async def ask(
    llm: LLMClient,
    messages: Sequence[ChatMessage],
    box: ToolBox,
    counter: TokenCounter,
    fit: ContextFit | None,
    who: str,
    max_rounds: int = MAX_TOOL_ROUNDS,
    stream: StreamGuard | None = None,
) -> LLMResponse:
    """The model's answer to ``messages`` cut to ``fit`` (None: as built), tools run;
    ``stream`` sees the reply as it is written (agent.streaming)."""
    if fit is None:
        return await run_tool_loop(llm, messages, box, max_rounds, stream)
    fitted = fit_messages(messages, counter, fit.prompt_tokens)
    over = prompt_count(fitted, counter) - fit.prompt_tokens
    if over > 0:  # only the rules and the message are left, and they are too long
        raise _too_long(fitted, counter, over)

    def halved(convo: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The turn so far cut to half, or None when nothing more can go."""
        size = prompt_count(convo, counter)
        log.warning("%s: the prompt did not fit: asking again with half", who)
        half = fit_messages(convo, counter, size // 2)
        return half if prompt_count(half, counter) < size else None

    return await run_tool_loop(llm, fitted, box, max_rounds, stream, shrink=halved)


def _too_long(
    messages: Sequence[ChatMessage], counter: TokenCounter, over: int
) -> MessageTooLongError:
    """The error saying how many characters of the user's message would fit."""
    text = turn_message(str(messages[turn_index(messages)].get("content") or ""))
    room = counter.count(text) - over
    fits = len(counter.truncate(text, room)) if room > 0 else 0
    return MessageTooLongError(
        f"the message ({len(text)} characters) does not fit the context: {fits} would", fits
    )


def failure_reply(exc: LLMError, lang: str) -> str:
    """The one sentence that tells the user, in ``lang``, why the model did not answer."""
    if isinstance(exc, MessageTooLongError) and exc.fits > 0:
        return say("message_too_long", lang, length=f"{exc.fits:,}")
    return say(failure_text(exc), lang)


def failure_text(exc: LLMError) -> str:
    """The key of the sentence that tells the user the model could not answer."""
    if isinstance(exc, LLMContextError | MessageTooLongError):
        return "context_full"
    return "down" if isinstance(exc, LLMUnavailableError) else "garbage"


def forced_compaction(
    compactor: Compactor,
    work: WorkQueue,
    session: Session,
    message: IncomingMessage,
    later: Sequence[Task],
) -> list[Task]:
    """The compaction of a session whose prompt did not fit even cut: all but its last turn.

    Counting the rest of the prompt as the whole threshold makes the plan keep one turn.
    """
    if any(t.kind == KIND_COMPACT for t in later):
        return []
    full = compactor.config.auto_write_threshold_tokens
    task = compaction_task(compactor, work, session, message, full)
    return [task] if task is not None else []
