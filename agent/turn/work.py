"""What one turn leaves for the background worker: the tasks it plans and their queueing.

The turn answers from what it read; indexing its log lines, the compaction and the topic
index are :class:`~agent.deferred.Task` rows the worker does after the reply
(docs/architecture.md, "Work that can wait"). This module builds those rows from what the
turn saw and appends them to the user's queue in one transaction.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agent.deferred import KIND_COMPACT, KIND_INDEX, KIND_TOPICS, Task, WorkQueue
from agent.prompt import detect_language
from agent.selection import L1, L2, Selection
from agent.summarizer import KeptPrompt, LastPrompts
from agent.types import IncomingMessage
from history.compaction import Compactor
from history.config import HistoryConfig
from history.sessions import Session
from memory.base.guards import mask

log = logging.getLogger(__name__)


def index_task(files: Sequence[str]) -> Task:
    """Bring the index of ``files`` (the daily log the turn wrote) up to date."""
    return Task(KIND_INDEX, {"files": list(files)})


def compaction_task(
    compactor: Compactor,
    work: WorkQueue,
    session: Session,
    message: IncomingMessage,
    extra_tokens: int,
) -> Task | None:
    """The compaction of ``session`` when it is over the threshold, else None.

    The session is trimmed only after the summary is written (the conversation is written
    before it is trimmed), by the worker, so this turn answers from the untrimmed session:
    its prompt holds the same 15-message window either way. A session over the threshold
    stays so until the worker trims it, so one plan per session waits at a time.
    """
    key = message.user_key
    if not compactor.check(session, extra_tokens).triggered or work.has(key, KIND_COMPACT):
        return None
    plan = compactor.plan(session, extra_tokens=extra_tokens)
    if plan is None:
        return None
    lang = detect_language(message.text, message.language)
    payload = {"count": plan.count, "digest": plan.digest, "lang": lang}
    return Task(KIND_COMPACT, {**payload, "time": message.time.isoformat()})


def topics_task(selection: Selection, known: Sequence[str], now: datetime) -> Task:
    """The topic index's record of a turn: the sections the message is about.

    Those of the scope memories it named (L1) and those its search found before section
    gating narrowed it (:attr:`Selection.found_sections`), never the sections gating let into
    the prompt: a dominant section would record itself and stay dominant (issue 24).
    """
    sections = [s.candidate.section for s in selection.items if s.candidate.layer == L1]
    sections = [s for s in (*sections, *selection.found_sections) if s]
    # Masked as the topic index writes them: a row of pcai.db holds no secret either.
    payload = {
        "sections": [mask(s) for s in sections],
        "known": [mask(s) for s in known],
        # Which memory gave each section its line (MEMORY_TOPIC.md): ids, never the text,
        # so a /forget meanwhile leaves no copy here; the worker reads the text then.
        "entries": section_entries(selection),
        "time": now.isoformat(),
    }
    return Task(KIND_TOPICS, payload)


def section_entries(selection: Selection) -> dict[str, str]:
    """Section -> the first memory this turn looked up in it (L1/L2), by id."""
    out: dict[str, str] = {}
    for item in selection.items:
        c = item.candidate
        if c.section and c.layer in (L1, L2) and c.section not in out:
            out[mask(c.section)] = c.id
    return out


async def queue_tasks(work: WorkQueue, user_key: str, tasks: list[Task], now: datetime) -> bool:
    """Append ``tasks`` to ``user_key``'s queue (after the session was saved) and wake the
    worker; False when pcai.db refused them (the minute index job still indexes the log)."""
    try:
        await asyncio.to_thread(work.add, user_key, tasks, now)
    except Exception:
        log.exception("%s: deferred work not queued", user_key)
        return False
    work.notify()
    return True


def keep_prompt(
    prompts: LastPrompts | None,
    session: Session,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    later: Sequence[Task],
    history: HistoryConfig,
) -> None:
    """Keep the turn's prompt (its own turn left out) when the turn planned a compaction: the
    summary request is sent after it, so a prefix-caching server reads only its instruction."""
    if prompts is None or not any(t.kind == KIND_COMPACT for t in later):
        return
    first = max(0, session.window_from - history.max_history)  # the window's first message
    prompts.keep(session.id, KeptPrompt(tuple(messages[:-1]), tuple(tools), first))
