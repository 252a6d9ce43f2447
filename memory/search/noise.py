"""Noise filter: low-quality text kept out of memory and out of search results.

Categories, in Chinese and English:

- AI refusals ("I don't have any information", "我沒有相關的資料")
- meta-questions about memory itself ("do you remember", "你記得嗎")
- greetings and heartbeats ("hello", "hello, how are you?", "HEARTBEAT", "你好")
- too-short text (fewer than 5 characters once whitespace is removed)
- in search results only (:func:`chunk_noise`): the user's bare questions and commands to the
  bot, and the bot's lines about its own bookkeeping ("Saved to memory"), as daily-log records

Greetings and meta-questions only count as noise when they make up (almost) the whole text:
"Hey Mel! I went to a support group yesterday" carries a fact and must be kept, while
"hi there!" or "你記得嗎？" carries none. Refusals are matched anywhere in a short reply,
since an assistant's refusal is noise whatever polite words surround it.
"""

from __future__ import annotations

import re

MIN_CHARS = 5
# Refusals longer than this are probably an answer that merely mentions a limitation.
_REFUSAL_MAX_CHARS = 240
# A meta-question longer than this likely also carries content worth keeping.
_META_MAX_CHARS = 60
# A greeting and two short words: longer text is never all greeting, and the pattern (nested
# runs of blanks and symbols) is only ever run on this much.
_GREETING_MAX_CHARS = 120

_REFUSAL = re.compile(
    r"i\s+(?:do\s*n[o']?t|don't|dont)\s+have\s+(?:any\s+)?(?:relevant\s+)?"
    r"(?:information|info|data|records?|memor(?:y|ies)|details|context)"
    r"|i\s+(?:do\s*n[o']?t|don't|dont)\s+(?:recall|remember)\b"
    r"|i\s+(?:was\s*n[o']?t|wasn't)\s+able\s+to\s+find"
    r"|i\s+(?:do\s*n[o']?t|don't)\s+have\s+access\s+to"
    r"|no\s+(?:relevant\s+)?(?:memories|information|records)\s+(?:were\s+)?found"
    r"|(?:i'?m|i\s+am)\s+(?:sorry|afraid)[,.]?\s+(?:but\s+)?i\s+(?:can(?:no|')t|cannot|am\s+unable)"
    r"|as\s+an\s+ai(?:\s+language\s+model)?\b"
    r"|我(?:並|并)?(?:沒有|没有|無|无)(?:任何)?(?:相關|相关|關於|关于)?(?:的)?"
    r"(?:資料|资料|資訊|资讯|信息|記錄|记录|紀錄|記憶|记忆|印象)"
    r"|(?:抱歉|對不起|对不起|很遺憾|很遗憾)[，,。!！ ]*我(?:無法|无法|不能|沒辦法|没办法|不知道)"
    r"|我(?:不記得|不记得|想不起來|想不起来)"
    r"|(?:作為|作为)(?:一個|一个)?\s*(?:AI|人工智慧|人工智能|語言模型|语言模型)"
    r"|(?:找不到|查無|查无|沒有找到|没有找到)(?:相關|相关)?(?:的)?(?:記憶|记忆|資料|资料|紀錄|记录)",
    re.IGNORECASE,
)

_META = re.compile(
    r"^\W*(?:hey|so|and|hmm|um)?\W*"
    r"(?:do|can|could|did)\s+you\s+(?:still\s+)?(?:remember|recall|know\s+about)\b"
    r"|^\W*(?:did|have)\s+i\s+(?:ever\s+)?(?:tell|told|mention(?:ed)?|say|said|share[d]?)\b"
    r"|^\W*what\s+did\s+i\s+(?:tell|say|mention)\b"
    r"|你(?:還|还)?(?:記得|记得)(?:嗎|吗|不|我)"
    r"|你(?:還|还)?(?:記不記得|记不记得)"
    r"|我(?:有沒有|有没有|是否)?(?:跟你|和你|對你|对你)?(?:說過|说过|提過|提过)"
    r"(?:嗎|吗|什麼|什么)?",
    re.IGNORECASE,
)

_GREETING_WORDS = (
    r"how\s+(?:are|r)\s+(?:you|u|ya)(?:\s+doing)?(?:\s+today)?|how'?s\s+it\s+going"
    r"|how\s+have\s+you\s+been|what'?s\s+up|nice\s+to\s+meet\s+you"
    r"|你好嗎|你好吗|最近好嗎|最近好吗|最近怎麼樣|最近怎么样|吃飽了嗎|吃饱了吗"
    r"|hi|hello|hey|hiya|yo|howdy|greetings|good\s+(?:morning|afternoon|evening|night)"
    r"|morning|evening|thanks|thank\s+you|bye|goodbye|see\s+you"
    r"|heartbeat(?:[_\s-]?ok)?|ping|fresh\s+session|new\s+session"
    r"|你好|您好|哈囉|哈啰|嗨|早安|午安|晚安|早|早上好|晚上好|謝謝|谢谢|再見|再见|拜拜|心跳"
)
# The whole text is a greeting, optionally followed by up to two short words (a name, "there").
_GREETING = re.compile(
    rf"^\W*(?:{_GREETING_WORDS})(?:[\s,，!！~]*(?:{_GREETING_WORDS}|[啊呀喔哦啦囉]))*"
    rf"(?:[\s,，]+[^\W\d_]{{1,12}}){{0,2}}[\W_]*$",
    re.IGNORECASE,
)
_HEARTBEAT = re.compile(r"^\W*heartbeat\b", re.IGNORECASE)


def noise_reason(text: str) -> str | None:
    """Why ``text`` is noise ("too_short", "greeting", "refusal", "meta_question"), or None."""
    stripped = text.strip()
    if len("".join(stripped.split())) < MIN_CHARS:
        return "too_short"
    if _HEARTBEAT.match(stripped) or (
        len(stripped) <= _GREETING_MAX_CHARS and _GREETING.match(stripped)
    ):
        return "greeting"
    if len(stripped) <= _REFUSAL_MAX_CHARS and _REFUSAL.search(stripped):
        return "refusal"
    if len(stripped) <= _META_MAX_CHARS and _META.search(stripped):
        return "meta_question"
    return None


def is_noise(text: str) -> bool:
    """True when ``text`` is low-quality noise that should be neither stored nor returned."""
    return noise_reason(text) is not None


def own_words(text: str, kind: str) -> str:
    """A chunk's own words: a log record's "who: " prefix does not make a greeting content."""
    if kind == "log" and ": " in text[:70]:
        return text.split(": ", 1)[1]
    return text


# A question the user put to the bot carries no fact of its own: one sentence ending in a
# question mark (or 嗎/吗/呢), nothing said before it. "I got a cat. What should I call it?"
# says something and stays.
_BARE_QUESTION = re.compile(r"^[^.!?。！？\n]{1,200}(?:[?？]|[嗎吗呢][\s。.]*)[\s?？!！]*$")
_COMMAND = re.compile(r"^/[A-Za-z_]+\b")
# Who the bot's own lines are written as (a log kept with its replies, an imported one).
BOT_SPEAKERS = frozenset({"assistant", "bot", "pcai", "system"})
# The bot's lines about its own bookkeeping ("Saved to memory", "已記住") say nothing of the
# user; its other lines (an answer in a dialogue) stay.
_BOT_META = re.compile(
    r"\b(?:saved|remembered|noted|stored|forgot(?:ten)?|proposed?|pinned)\b"
    r"|\bmemor(?:y|ies)\b|記住|記下|記得了|儲存|存好|已記錄|已保存|記憶|提案|忘記了",
    re.IGNORECASE,
)
_BOT_META_MAX_CHARS = 160


def chunk_noise(text: str, kind: str) -> str | None:
    """Why a search hit is noise: :func:`noise_reason` of its own words, or, for a daily-log
    record, a bare question or a command the user sent the bot, or a line of the bot's own.

    Only the user's lines to the bot are judged as questions: a record of two people talking
    (``Caroline: ...``, an imported dialogue) keeps its questions, which are what was said.
    """
    words = own_words(text, kind)
    reason = noise_reason(words)
    if reason is not None or kind != "log" or ": " not in text[:70]:
        return reason
    who = text.split(": ", 1)[0].strip().lower()
    if who in BOT_SPEAKERS:
        meta = len(words) <= _BOT_META_MAX_CHARS and _BOT_META.search(words)
        return "bot_meta" if meta else None
    if who == "user":
        stripped = words.strip()
        if _COMMAND.match(stripped):
            return "command"
        if _BARE_QUESTION.match(stripped):
            return "question"
    return None
