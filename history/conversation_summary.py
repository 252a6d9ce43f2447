"""Compaction's conversation summary: the extractive one, and a model's answer made safe.

A compaction summary is Markdown bullets (topic, points, decisions, todos, numbers, names and
dates, chit-chat in one line "其間穿插閒聊…") plus a one-line gist for the session's note.
:mod:`history.summarize` asks the model and falls back to :func:`extract_conversation`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from history import extractive as ex
from history.sessions import KIND_COMPACTION, ROLE_USER, Message

CONVERSATION_MAX_CHARS = 1500


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """A compaction summary: the Markdown body and a one-line gist for the session."""

    body: str
    gist: str


def content_messages(messages: Sequence[Message]) -> list[Message]:
    """The messages with text, compaction notes left out."""
    return [m for m in messages if m.kind != KIND_COMPACTION and m.content.strip()]


def extract_conversation(
    messages: Sequence[Message], max_chars: int = CONVERSATION_MAX_CHARS
) -> ConversationSummary:
    """Compaction's summary without an LLM: topic, points, decisions, todos, facts, chit-chat."""
    msgs = content_messages(messages)
    chit = [m for m in msgs if m.role == ROLE_USER and ex.is_chitchat(m.content)]
    talk = [m for m in msgs if not ex.is_chitchat(m.content)]
    user_talk = [m.content for m in talk if m.role == ROLE_USER]
    topic = "、".join(ex.keywords(user_talk or [m.content for m in talk], 3))
    if not topic:
        first = next((ex.sentences(t) for t in user_talk if ex.sentences(t)), [""])
        topic = ex.clip(first[0], 40) or "閒聊 (small talk)"
    sents = [s for m in talk for s in ex.sentences(m.content)]
    # What the user said outranks the assistant's wording for decisions and todos.
    ranked = [s for t in user_talk for s in ex.sentences(t)]
    ranked += [s for m in talk if m.role != ROLE_USER for s in ex.sentences(m.content)]
    seen: set[str] = set()

    def pick(pattern: re.Pattern[str] | None, limit: int, pool: list[str]) -> list[str]:
        out = []
        for s in pool:
            if s in seen or (pattern is not None and not pattern.search(s)):
                continue
            if pattern is not None and s.endswith(("?", "？")):
                continue  # a question is not a decision or a todo
            seen.add(s)
            out.append(ex.clip(s, 90))
            if len(out) == limit:
                break
        return out

    decisions, todos = pick(ex.DECISION, 4, ranked), pick(ex.TODO, 4, ranked)
    user_sents = set(ranked[: sum(len(ex.sentences(t)) for t in user_talk)])
    candidates = [
        p
        for p in pick(None, len(sents), sents)
        if p.rstrip("…") in user_sents or ex.numbers(p) or ex.GOAL.search(p)
    ]
    points = _spread(candidates, 4)
    text = "\n".join(m.content for m in talk)
    facts = [
        (label, items)
        for label, items in (
            ("數字", ex.numbers(text)[:8]),
            ("人名", ex.names(text)[:8]),
            ("日期", ex.dates(text)[:6]),
        )
        if items
    ]
    lines = [f"- **主題：** {topic}"]
    if points:
        lines.append(f"- **重點：** {'；'.join(points)}")
    if decisions:
        lines.append(f"- **決定：** {'；'.join(decisions)}")
    if todos:
        lines.append(f"- **待辦：** {'；'.join(todos)}")
    if facts:
        lines.append(
            "- " + "；".join(f"**{label}：** {'、'.join(items)}" for label, items in facts)
        )
    if chit:
        samples = "、".join(ex.clip(m.content, 12) for m in chit[:3])
        lines.append(f"- 其間穿插閒聊（如：{samples}），不逐字記錄。")
    body = fit_lines(lines, max_chars)
    gist_parts = [f"主題：{topic}"]
    if decisions:
        gist_parts.append(f"決定：{decisions[0]}")
    if todos:
        gist_parts.append(f"待辦：{todos[0]}")
    return ConversationSummary(body=body, gist=ex.clip("；".join(gist_parts), 200))


def _spread(items: Sequence[str], n: int) -> list[str]:
    """``n`` items spread evenly over the sequence, so a long talk's later topics show too."""
    if len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


def fit_lines(lines: list[str], max_chars: int) -> str:
    """The lines that fit in ``max_chars`` characters, the last one clipped."""
    out: list[str] = []
    used = 0
    for line in lines:
        room = max_chars - used
        if room <= 10:
            break
        line = ex.clip(line, room)
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def normalise_conversation(
    text: str, max_chars: int = CONVERSATION_MAX_CHARS
) -> ConversationSummary | None:
    """Turn an LLM answer into bullets that cannot break the ``##`` block structure."""
    lines = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line or line.startswith("```"):
            continue
        line = re.sub(r"^#+\s*", "", line)  # a heading inside would split the block
        lines.append(line if line.startswith(("- ", "* ")) else f"- {line}")
    if not lines:
        return None
    topic = next((ln for ln in lines if re.search(r"主題|topic", ln, re.I)), lines[0])
    gist = ex.clip(re.sub(r"^[-*]\s*|\*\*", "", topic), 200)
    return ConversationSummary(body=fit_lines(lines, max_chars), gist=gist)
