"""Step 9 of a turn: asking the model with a prompt that fits its context.

A server that cuts or refuses a prompt anyway (our token count is not its tokenizer's) is
asked once more with the prompt cut to half its size; when that fails too, the user is told
in one sentence (``context_full``) and the session's compaction is queued, keeping one turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from agent.context_fit import ContextFit, fit_messages, prompt_count
from agent.deferred import KIND_COMPACT, Task, WorkQueue
from agent.errors import LLMContextError, LLMError, LLMUnavailableError
from agent.llm import ChatMessage, LLMClient, LLMResponse
from agent.streaming import StreamGuard
from agent.tools import MAX_TOOL_ROUNDS, ToolBox, run_tool_loop
from agent.turn_work import compaction_task
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
    try:
        return await run_tool_loop(llm, fitted, box, max_rounds, stream)
    except LLMContextError as exc:
        log.warning("%s: the prompt did not fit (%s): asking again with half", who, exc)
        half = fit_messages(fitted, counter, prompt_count(fitted, counter) // 2)
        return await run_tool_loop(llm, half, box, max_rounds, stream)


def failure_text(exc: LLMError) -> str:
    """The key of the sentence that tells the user the model could not answer."""
    if isinstance(exc, LLMContextError):
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
