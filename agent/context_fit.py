"""Sizing each prompt to the model's context (docs/architecture.md, "The model's context").

A server given more than its context cuts the prompt (Ollama, silently, with HTTP 200) or
refuses it (llama.cpp, vLLM: HTTP 400). The bot knows the context length, leaves room for
the reply and the tool schemas, and keeps a margin because its own token counter (tiktoken)
is not the model's tokenizer. The compaction threshold and the memory block follow the
prompt's room; a prompt still over it loses its oldest history first, then memory block
lines, then the ends of tool results; never the rules or the user's message (a message that
does not fit alone is said to be too long, :mod:`agent.turn.llm`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent.prompt import MEMORY_CLOSE, MEMORY_OPEN, closed, system_prompt, user_turn
from history.config import HistoryConfig
from memory.base.tokens import TokenCounter
from memory.config import BudgetConfig

DEFAULT_CONTEXT_TOKENS = 8192  # fits the design's own budgets: ~2,900 before any history
# The share of the context kept free for the difference between our count and the model's.
MARGIN = 0.1
PER_MESSAGE = 4  # the chat template's tokens around each message
MESSAGE_ROOM_TOKENS = 256  # a reasonable message (a paragraph) that every context must hold
CUT_NOTE = " …(cut to fit the model's context)"


@dataclass(frozen=True, slots=True)
class ContextFit:
    """The model's context and what a prompt's messages may take of it."""

    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    reply_tokens: int = 1024
    tools_tokens: int = 0  # the tool schemas offered with every private turn

    @property
    def prompt_tokens(self) -> int:
        """The most the messages may count (our count) so that the reply still fits."""
        room = int(self.context_tokens * (1 - MARGIN)) - self.reply_tokens - self.tools_tokens
        return max(room, self.context_tokens // 4)


def context_needed(
    counter: TokenCounter, reply_tokens: int, schemas: Sequence[Mapping[str, Any]]
) -> int:
    """The least context a private turn fits in: :func:`turn_floor` and ``reply_tokens`` for
    the reply, with the margin :attr:`ContextFit.prompt_tokens` keeps for our count."""
    return math.ceil((turn_floor(counter, schemas) + reply_tokens) / (1 - MARGIN))


def turn_floor(counter: TokenCounter, schemas: Sequence[Mapping[str, Any]]) -> int:
    """What a private turn takes before its reply: the rules, the tool schemas and a message
    of :data:`MESSAGE_ROOM_TOKENS` in its turn."""
    longest_day = datetime(2026, 9, 30, 12, 0)  # a Wednesday: the longest day name
    rules = counter.count(system_prompt(longest_day)) + PER_MESSAGE
    turn = counter.count(user_turn(longest_day, "en", "")) + PER_MESSAGE + MESSAGE_ROOM_TOKENS
    return rules + turn + tools_tokens(schemas, counter)


def tools_tokens(schemas: Sequence[Mapping[str, Any]], counter: TokenCounter) -> int:
    """What the tool schemas cost in a prompt."""
    return counter.count(json.dumps(list(schemas), ensure_ascii=False)) if schemas else 0


def sized_history(history: HistoryConfig, fit: ContextFit) -> HistoryConfig:
    """Compaction starts before a prompt could outgrow the context (or at the setting)."""
    if history.auto_write_threshold_tokens <= fit.prompt_tokens:
        return history  # the setting as given (a large context)
    return dataclasses.replace(history, auto_write_threshold_tokens=fit.prompt_tokens)


def sized_budget(budget: BudgetConfig, fit: ContextFit) -> BudgetConfig:
    """The memory block takes at most a quarter of the prompt's room (or the setting)."""
    memory = min(budget.memory_tokens, max(200, fit.prompt_tokens // 4))
    parts = (budget.long_chunk_max_tokens, budget.short_term_max_tokens)
    if memory == budget.memory_tokens and max(parts) <= memory:
        return budget  # the setting as given (a large context)
    return dataclasses.replace(
        budget,
        memory_tokens=memory,
        long_chunk_max_tokens=min(budget.long_chunk_max_tokens, memory),
        short_term_max_tokens=min(budget.short_term_max_tokens, memory),
    )


def prompt_count(messages: Sequence[Mapping[str, Any]], counter: TokenCounter) -> int:
    """Our count of ``messages`` as a prompt."""
    return sum(counter.count(str(m.get("content") or "")) + PER_MESSAGE for m in messages)


def fit_messages(
    messages: Sequence[Mapping[str, Any]], counter: TokenCounter, limit: int
) -> list[dict[str, Any]]:
    """``messages`` (the head, history, the user's turn, then the turn's tool exchange) cut to
    ``limit`` tokens, what matters least first.

    The oldest history goes first, then the memories (the last lines of the turn's memory
    block, of the pinned lines in the head, of a separate memory message: each is ordered best
    first), then the tool results' ends. The rules and the user's message are never cut: when
    they alone are over ``limit`` the result is too, and the caller says the message is too
    long (a message cut to nothing would be answered as if the person had said nothing).
    """
    out = [dict(m) for m in messages]
    total = prompt_count(out, counter)
    if total <= limit or len(out) < 2:
        return out
    turn = turn_index(out)
    head = 1  # the rules (and the pinned memories)
    while head < turn and out[head]["role"] == "system":
        head += 1
    while total > limit and head < turn:
        gone = out.pop(head)  # the oldest history message
        turn -= 1
        total -= _cost(gone, counter)
    # The memories: the turn's block, the head's pinned lines, then separate memory messages.
    # (index, keep the block's preface, a memory message of its own)
    places = [(turn, False, False), (0, True, False), *((i, False, True) for i in range(1, head))]
    for i, keep_preface, whole in places:
        if total <= limit:
            break
        before = _cost(out[i], counter)
        text = str(out[i].get("content") or "")
        out[i]["content"] = _cut_memories(text, total - limit, counter, keep_preface, whole)
        total += _cost(out[i], counter) - before
    for m in out[turn + 1 :]:  # the tool results this turn's calls gave, oldest first
        if total <= limit:
            break
        if m.get("role") == "tool":
            before = _cost(m, counter)
            m["content"] = _cut_result(str(m.get("content") or ""), total - limit, counter)
            total += _cost(m, counter) - before
    return out


def turn_index(messages: Sequence[Mapping[str, Any]]) -> int:
    """Where the user's turn is: the last user message (a tool exchange may follow it)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return len(messages) - 1


def _cost(message: Mapping[str, Any], counter: TokenCounter) -> int:
    return counter.count(str(message.get("content") or "")) + PER_MESSAGE


def _cut_memories(
    text: str, over: int, counter: TokenCounter, keep_preface: bool, whole: bool
) -> str:
    """``text`` with about ``over`` tokens of its memory block's last lines gone; the block
    goes whole once no line is left (unless ``keep_preface``). A memory message without a
    block (``whole``) is cut at its end and closed."""
    start = text.rfind(MEMORY_OPEN)
    end = text.find(MEMORY_CLOSE, start) if start >= 0 else -1
    if end < 0:
        if not whole:
            return text  # no memories here: the rules, or the user's own words
        return closed(counter.truncate(text, max(0, counter.count(text) - over)))
    end += len(MEMORY_CLOSE)
    inner = text[start + len(MEMORY_OPEN) + 1 : end - len(MEMORY_CLOSE) - 1]
    preface, sep, body = inner.partition("\n\n")
    lines = body.split("\n") if sep else []
    while lines and over > 0:
        over -= counter.count(lines.pop()) + 1
    if lines:
        block = data_block_of(preface, lines)
    elif keep_preface:
        block = data_block_of(preface, [])
    else:  # nothing left of it: the block goes, with the blank line before it
        start -= 2 if text[:start].endswith("\n\n") else 0
        block = ""
    return text[:start] + block + text[end:]


def data_block_of(preface: str, lines: Sequence[str]) -> str:
    """A data block of lines already framed (:func:`agent.prompt.data_block`'s layout)."""
    inner = f"{preface}\n\n" + "\n".join(lines) if lines else preface
    return f"{MEMORY_OPEN}\n{inner}\n{MEMORY_CLOSE}"


def _cut_result(text: str, over: int, counter: TokenCounter) -> str:
    """A tool result with about ``over`` tokens cut from its end, said so."""
    size, note = counter.count(text), counter.count(CUT_NOTE)
    if size <= 2 * note:
        return text  # too short for a cut to gain anything
    return counter.truncate(text, max(note, size - over - note)) + CUT_NOTE
