"""Every function that reads user text (``name -> f(text)``) and adversarial text built of runs.

Shared by the property tests (tests/trust/test_linear_time.py) and bench/adversarial.py, so the
bench times exactly the functions the tests attack. Each entry feeds the text where the user's
words reach the function: a ``/remind`` phrase, a MEMORY.md heading, a daily-log record, a
message. Errors the function raises on purpose (a phrase without a time) are answers too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from agent.errors import AgentError
from agent.prompt import detect_language, neutralise
from agent.remember import claims_saved, remember_request, says_pending
from agent.reminders.briefing import todos_from
from agent.reminders.dates import find_recurring_date
from agent.reminders.parse import parse_reminder
from agent.reminders.settings import parse_briefing_time
from bot.frontdesk.texts import split_text
from history import extractive as ex
from history.conversation_summary import extract_conversation
from history.redact import Redactor, words
from history.section_words import named
from history.sessions import KIND_COMPACTION, Message
from history.summarize import parse_structured
from memory.base import guards
from memory.base.escaping import escape, unescape
from memory.base.guards import mask, scan
from memory.base.logs import format_record, parse_log
from memory.base.markdown import parse_memory
from memory.base.sections import choose_section
from memory.base.spans import parse_span
from memory.config import AdaptiveConfig
from memory.index.t2s import to_simplified
from memory.index.text import fts_match_query, keyword_terms
from memory.search.adaptive import decide_retrieval
from memory.search.noise import noise_reason
from memory.search.replies import asks
from memory.state.short_term import categories_in
from memory.write.decisions import classify_reply
from memory.write.emphasis import emphasis
from memory.write.governance import derive_summary, guess_class

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
ZONE = ZoneInfo("Asia/Taipei")
SIZE = 100_000


def _answer(f: Callable[[str], object]) -> Callable[[str], object]:
    """``f``, with the errors it raises on purpose (one sentence for the user) as its answer."""

    def call(text: str) -> object:
        try:
            return f(text)
        except AgentError as exc:
            return str(exc)

    return call


def _new_message_mask(text: str) -> str:
    """guards.mask as a new message costs: its memo (keyed by text) is emptied first, or the
    bench's repeated timings of one text would time a dictionary lookup."""
    memo = getattr(guards, "_masked_memo", None)
    items = getattr(memo, "_items", None)
    if items is not None:
        items.clear()
        memo.used = 0  # type: ignore[union-attr]
    return mask(text)


def _messages(text: str) -> list[Message]:
    return [
        Message("user", text, NOW),
        Message("assistant", text, NOW, summary=text),
        Message("system", text, NOW, kind=KIND_COMPACTION),
    ]


TEXT_FUNCTIONS: dict[str, Callable[[str], object]] = {
    "parse_reminder": _answer(lambda t: parse_reminder(t, NOW, ZONE)),
    "parse_briefing_time": _answer(parse_briefing_time),
    "find_recurring_date": find_recurring_date,
    "todos_from": lambda t: todos_from(_messages(t), NOW),
    "emphasis": emphasis,
    "parse_memory": parse_memory,
    "parse_memory_heading": lambda t: parse_memory(f"# MEMORY\n\n## {t}\n\n- fact\n"),
    "parse_log": lambda t: parse_log("2026-11-25", f"# 2026-11-25\n\n- 09:00:00 user: {t}\n"),
    "parse_log_raw": lambda t: parse_log("2026-11-25", t),
    "format_record": lambda t: format_record(NOW, "user", t),
    "remember_request": remember_request,
    "claims_saved": claims_saved,
    "says_pending": says_pending,
    "noise_reason": noise_reason,
    "decide_retrieval": lambda t: decide_retrieval(t, turn=3, config=AdaptiveConfig()),
    "structured_fields": lambda t: ex.structured_fields(t, True),
    "extractive_terms": lambda t: ex.keywords([t]),
    "extractive_dates_numbers_names": lambda t: (ex.dates(t), ex.numbers(t), ex.names(t)),
    "is_chitchat": ex.is_chitchat,
    "extract_conversation": lambda t: extract_conversation(_messages(t)),
    "parse_structured": parse_structured,
    "redact": lambda t: Redactor(
        ["hunter22", "我每天早上喝咖啡", "my sister's birthday is March 3"], ["I drink green tea"]
    )(t),
    "redact_words": words,
    "section_named": lambda t: named(t, ["coffee", "咖啡", "work"]),
    "escape_unescape": lambda t: unescape(escape(t, multiline=True)),
    "choose_section": choose_section,
    "parse_span": parse_span,
    "categories_in": categories_in,
    "fts_match_query": fts_match_query,
    "keyword_terms": keyword_terms,
    "asks": asks,
    "to_simplified": to_simplified,
    "derive_summary": derive_summary,
    "guess_class": guess_class,
    "classify_reply": classify_reply,
    "detect_language": detect_language,
    "neutralise": neutralise,
    "split_text": split_text,
    "guards.mask": _new_message_mask,
    "guards.scan": scan,
}

# The runs adversarial text is built from: every whitespace class, the punctuation the patterns
# look for, the words they key on, digits with separators, CJK, emoji and combining marks.
WHITESPACE: tuple[str, ...] = (
    " ",
    "\u3000",
    "\u00a0",
    "\t",
    "\n",
    "\r\n",
    "\u2028",
    "\u200b",
    "\x0b",
    " \n",
)
PUNCTUATION: tuple[str, ...] = (
    "-",
    ":",
    ".",
    "/",
    "，",
    "。",
    "：",
    "、",
    "；",
    "！",
    "*",
    "#",
    "_",
    "`",
    "|",
)
PUNCTUATION += ("{#", "}", "[", "](", "<", ">", "=", "\\", "'", '"', "~", "…", "—", "（")
PUNCTUATION += ("?", "？")
KEYWORDS: tuple[str, ...] = (
    "密碼是x",
    "password: x",
    "pin ",
    "token ",
    "分",
    "分鐘",
    "後",
    "minutes",
    "in 1 ",
)
KEYWORDS += ("十", "1", "1 ", "12:", "1.", "1-", "1/", "月", "號", "年", "生日", "重要", "very ")
KEYWORDS += ("remind me ", "提醒我", "TODO", "Goal:", "## ", "- ", "  - ", "thanks", "謝謝")
KEYWORDS += ("remember", "記得", '{"name": ', "<tool_call>", "important", "the ")
# The start of a Traditional phrase whose every length is looked up (memory.index.t2s).
KEYWORDS += ("乾", "酒逢知己千鍾少話不投機半句")
OTHER: tuple[str, ...] = (
    "咖啡",
    "a",
    "ab ",
    "😀",
    "e\u0301",
    "\u0301",
    "👩\u200d💻",
    "ı",
    "ß",
    "Ⅻ",
    "٣",
)
UNITS = WHITESPACE + PUNCTUATION + KEYWORDS + OTHER


def runs(parts: list[tuple[str, int]], size: int = SIZE) -> str:
    """``parts`` (unit, weight) as runs whose lengths follow the weights, repeated to ``size``."""
    total = sum(len(unit) * max(weight, 1) for unit, weight in parts) or 1
    block = "".join(unit * max(1, weight * size // total // 4) for unit, weight in parts)
    block = block or "x"
    return (block * (size // len(block) + 1))[:size]


def adversarial_inputs(size: int = SIZE) -> dict[str, str]:
    """A fixed set of adversarial texts of ``size`` characters (the bench's inputs)."""
    out: dict[str, str] = {}
    for unit in UNITS:
        out[f"run {unit!r} x"] = runs([(unit, 1)], size - 1) + "x"
        out[f"1 {unit!r} 分 {unit!r} x"] = runs([("1", 0), (unit, 8), ("分", 0), (unit, 8)], size)
    for unit in UNITS[::3]:
        out[f"{unit!r} spaced"] = runs([(unit, 0), (" ", 0)], size)
    out["remind 1 spaces 分 spaces x"] = "1" + " " * (size // 2 - 1) + "分" + " " * (size // 2)
    out["keyword repeats"] = runs([("密碼是x", 0), ("，", 0)], size)
    out["digits separated"] = runs([("1", 0), (" ", 0), ("2", 0), ("-", 0)], size)
    return out


def plain_text(size: int = SIZE) -> str:
    """Ordinary mixed prose of ``size`` characters, a line per sentence: the bench's reference."""
    sentence = (
        "I had coffee with Anna at the station this morning and we talked about the trip.\n"
        "我們明天下午要去台北開會，要帶筆電和充電器。\n"
    )
    return (sentence * (size // len(sentence) + 1))[:size]
