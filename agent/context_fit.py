"""Sizing each prompt to the model's context (docs/architecture.md, "The model's context").

A server given more than its context cuts the prompt (Ollama, silently, with HTTP 200) or
refuses it (llama.cpp, vLLM: HTTP 400). The bot knows the context length, leaves room for
the reply and the tool schemas, and keeps a margin because its own token counter (tiktoken)
is not the model's tokenizer. The compaction threshold and the memory block follow the
prompt's room; a prompt still over it loses its oldest history first, then memory block
lines, and only then the end of the user's message.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.prompt import closed
from history.config import HistoryConfig
from memory.base.tokens import TokenCounter
from memory.config import BudgetConfig

DEFAULT_CONTEXT_TOKENS = 8192  # fits the design's own budgets: ~2,900 before any history
# The share of the context kept free for the difference between our count and the model's.
MARGIN = 0.1
PER_MESSAGE = 4  # the chat template's tokens around each message


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
    """``messages`` (system..., history..., the user's message) cut to ``limit`` tokens.

    The oldest history goes first, then the memory block's last lines (the least relevant:
    it is ordered best first), then the end of the user's message; the system text stays.
    """
    out = [dict(m) for m in messages]
    total = prompt_count(out, counter)
    if total <= limit or len(out) < 2:
        return out
    head = 1  # the system text
    while head < len(out) - 1 and out[head]["role"] == "system":
        head += 1
    while total > limit and head < len(out) - 1:
        gone = out.pop(head)  # the oldest history message
        total -= counter.count(str(gone.get("content") or "")) + PER_MESSAGE
    for i in [*range(1, head), len(out) - 1]:  # the memory block, then the user's message
        if total <= limit:
            break
        text = str(out[i].get("content") or "")
        keep = max(0, counter.count(text) - (total - limit))
        out[i]["content"] = closed(counter.truncate(text, keep))  # a cut block stays data
        total = prompt_count(out, counter)
    return out
