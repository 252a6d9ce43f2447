"""The hybrid short-term context: 15 messages, the newest 5 verbatim.

Older messages are shown by their structured summary, marked ``[Summary]``, or verbatim and
marked ``[Old]`` when they have none. A message gets a summary when it meets one of the
dynamic triggers (tool output, a list or code, more than 6 sentences or 10 lines, or the
words 決定 / 下一步 / TODO / 優先), so short small talk stays as it is. The layout is
documented in docs/conversations.md, "The short-term window".

A prompt applies the window in steps (:func:`stepped_window`, docs/prompt.md): it is rebuilt
to the 15/5 shape every ``WINDOW_STEP`` messages and at each compaction trim, and the messages
in between are appended verbatim, so consecutive prompts share their prefix (a model server's
cache keeps it) instead of sliding and re-marking one message a turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from history import extractive as ex
from history.compaction_note import MESSAGE_OVERHEAD_TOKENS, fit_tokens, note_limit
from history.config import HistoryConfig
from history.sessions import (
    KIND_COMPACTION,
    ROLE_ASSISTANT,
    ROLE_TOOL,
    ROLE_USER,
    Message,
    Session,
)
from history.summarize import SummaryService
from memory.base.tokens import TokenCounter

# The earlier rule (summaries for messages over 800 characters) stays as a floor.
LONG_MESSAGE_CHARS = 800
# Messages appended verbatim after a rebuild of the window before the next rebuild (10
# turns). A rebuild makes the model read the conversation again; with the default compaction
# (15 turns, 5 kept) the trims rebuild it first, so this step mostly serves groups and raised
# thresholds. bench/prompt_cache.py: 12 messages cost 1.58x the truly new tokens, 20: see
# bench/RESULTS.md.
WINDOW_STEP = 20


def needs_summary(message: Message, config: HistoryConfig) -> bool:
    """The dynamic summarisation triggers.

    A message is summarised when it is tool output, holds a list or code, has more than
    ``summarize_min_sentences`` (6) sentences or ``summarize_min_lines`` (10) lines, is longer
    than 800 characters, or names 決定 / 下一步 / TODO / 優先.
    """
    if message.kind == KIND_COMPACTION or not message.content.strip():
        return False
    text = message.content
    return (
        message.role == ROLE_TOOL
        or ex.has_list_or_code(text)
        or len(ex.sentences(text)) > config.summarize_min_sentences
        or len(text.splitlines()) > config.summarize_min_lines
        or len(text) > LONG_MESSAGE_CHARS
        or bool(ex.SUMMARY_KEYWORDS.search(text))
    )


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    """The messages of the short-term context: older ones (summarised) and the recent ones."""

    note: Message | None  # the compaction summary standing for older history, if any
    older: tuple[Message, ...]  # shown by summary ([Summary]) or verbatim ([Old])
    recent: tuple[Message, ...]  # the newest ``full_text_count``, verbatim

    @property
    def messages(self) -> tuple[Message, ...]:
        """Older and recent messages, oldest first."""
        return self.older + self.recent


def history_window(messages: Sequence[Message], config: HistoryConfig) -> HistoryWindow:
    """The last ``max_history`` (15) messages: older ones, then the newest ``full_text_count`` (5).

    The latest compaction note is kept apart so it is never pushed out of the window.
    """
    notes = [m for m in messages if m.kind == KIND_COMPACTION]
    rows = [m for m in messages if m.kind != KIND_COMPACTION][-config.max_history :]
    split = max(0, len(rows) - config.full_text_count)
    return HistoryWindow(notes[-1] if notes else None, tuple(rows[:split]), tuple(rows[split:]))


def stepped_window(session: Session, config: HistoryConfig) -> HistoryWindow:
    """The window of this turn's prompt: the 15/5 window as of the last rebuild, then the
    messages since, verbatim. ``session`` ends with the message being answered (left out).

    The window is rebuilt (``session.window_from`` set to the message count, compaction
    notes aside) when ``WINDOW_STEP`` messages were appended since the last rebuild, and when
    the session holds fewer messages than at it (a compaction trim sets it itself).
    """
    history = session.messages[:-1]
    notes = [m for m in history if m.kind == KIND_COMPACTION]
    body = [m for m in history if m.kind != KIND_COMPACTION]
    start = session.window_from
    if start > len(body) or len(body) - start >= WINDOW_STEP:
        start = session.window_from = len(body)
    frozen = history_window([*notes, *body[:start]], config)
    return replace(frozen, recent=frozen.recent + tuple(body[start:]))


def fit_note(window: HistoryWindow, counter: TokenCounter, max_tokens: int) -> HistoryWindow:
    """The window with its compaction note cut to cost at most ``max_tokens`` in a prompt.

    Notes are written to fit already (:func:`history.compaction.note_text`); this holds the
    budget for notes written before it, or under a larger one. A note cut to nothing goes.
    """
    if window.note is None:
        return window
    text = fit_tokens(window.note.content, counter, max_tokens)
    if text == window.note.content:
        return window
    note = replace(window.note, content=text) if text.strip() else None
    return replace(window, note=note)


def summary_room(window: HistoryWindow, counter: TokenCounter, config: HistoryConfig) -> int:
    """Tokens left for compaction summary hits: the compaction's share less its note's cost."""
    note = fit_note(window, counter, note_limit(config)).note
    used = counter.count(note.content) + MESSAGE_OVERHEAD_TOKENS if note is not None else 0
    return max(0, config.compaction_prompt_tokens - used)


def time_stamp(when: datetime) -> str:
    """The line that opens a user's turn in a prompt: ``[2026-02-08 Sunday 12:00]``."""
    return when.strftime("[%Y-%m-%d %A %H:%M]")


def _role_name(message: Message) -> str:
    return "User" if message.role == ROLE_USER else "AI"


def render_history(window: HistoryWindow, config: HistoryConfig) -> str:
    """The context text, laid out as docs/conversations.md, "The short-term window" says.

    ``{older}\\n\\n=== Recent Context (最新 5 則原文) ===\\n{recent}``, where an older line is
    ``User[Summary]: …`` or ``AI[Old]: …`` and a recent line ``User: …``. A compaction note,
    when there is one, comes first on its own; with no older messages the leading blank lines
    are left out.
    """
    if not window.older and not window.recent:
        return window.note.content if window.note else ""
    older = "\n".join(
        f"{_role_name(m)}{'[Summary]' if m.summary else '[Old]'}: {m.summary or m.content}"
        for m in window.older
    )
    recent = "\n".join(f"{_role_name(m)}: {m.content}" for m in window.recent)
    header = f"=== Recent Context (最新 {config.full_text_count} 則原文) ==="
    text = f"{older}\n\n{header}\n{recent}" if older else f"{header}\n{recent}"
    return f"{window.note.content}\n\n{text}" if window.note else text


def history_context(messages: Sequence[Message], config: HistoryConfig) -> str:
    """The context text for a list of messages."""
    return render_history(history_window(messages, config), config)


def history_chat_messages(window: HistoryWindow) -> list[dict[str, str]]:
    """The same window as chat messages for the LLM (role + content), oldest first.

    A verbatim user message opens with its time, as its own turn did when it was sent, so a
    server's cache of that turn still holds (docs/prompt.md).

    The compaction note goes first as a user message: servers hoist system messages to the
    prompt's head (Ollama joins them there), which would change the head at every compaction.
    """
    out: list[dict[str, str]] = []
    if window.note:
        out.append({"role": ROLE_USER, "content": window.note.content})

    def role(m: Message) -> str:
        return ROLE_USER if m.role == ROLE_USER else ROLE_ASSISTANT

    for m in window.older:
        text = f"[Summary] {m.summary}" if m.summary else f"[Old] {m.content}"
        out.append({"role": role(m), "content": text})
    for m in window.recent:
        text = f"[Tool] {m.content}" if m.role == ROLE_TOOL else m.content
        if m.role == ROLE_USER:  # as its turn began when it was sent (agent.prompt.user_turn)
            text = f"{time_stamp(m.time)}\n{text}"
        out.append({"role": role(m), "content": text})
    return out


async def fill_summaries(
    session: Session, summaries: SummaryService, config: HistoryConfig, upto: int | None = None
) -> int:
    """Give the window's older messages that meet a trigger their structured summary.

    ``upto`` limits the messages considered (e.g. ``-1`` leaves out the message being
    answered). Returns how many summaries were made; the session is changed in place.
    """
    messages = session.messages if upto is None else session.messages[:upto]
    window = history_window(messages, config)
    made = 0
    for message in window.older:
        if message.summary or not needs_summary(message, config):
            continue
        summary = await summaries.message_summary(message, config.summary_max_chars)
        for i, m in enumerate(session.messages):
            if m is message:
                session.messages[i] = replace(m, summary=summary)
                made += 1
                break
    return made
