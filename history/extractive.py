"""Deterministic text analysis for summaries when no LLM is reachable (Chinese and English).

Everything here is a pure function over strings: sentence splitting, keyword extraction,
sentence classes (goal / decision / todo), numbers, names and dates, and chit-chat detection.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from memory.base.edges import end_before

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])\s*|\n+|(?<=[.])\s+(?=[A-Z0-9\u4e00-\u9fff])")
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+#.-]*[A-Za-z0-9+#]|[A-Za-z]{2,}")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# Function characters that rarely belong inside a keyword: they split CJK runs into terms.
_CJK_STOP_CHARS = set(
    "的了是在我你他她它們也和就而及與或要會把被讓給對說很嗎呢吧啊呀喔哦嗯這那有沒不個一"
    "上下來去到得著過還再又但如果因為所以可以什麼怎麼請幫用想跟從為中後前"
)
_CJK_STOPWORDS = frozenset(
    re.findall(
        r"\S+",
        """
        我們 你們 他們 今天 現在 時候 一下 一些 這樣 那樣 然後 已經 應該 覺得 知道 需要
        沒有 還是 就是 可能 比較 真的 謝謝 你好 哈哈 好的 早安 晚安 問題 東西 事情 自己
        決定 下一步 待辦 明天 記下 已經 目前 今天 昨天 後天 一起 可以
        """,
    )
)
# The last line is the chat's role names. A summary of a transcript ("User: ...", "the user
# asked") and a small model running on past its turn ("...\nuser\n...") write them often, so
# one came out as a conversation's commonest word and joined MEMORY.md's keyword index.
_EN_STOPWORDS = frozenset(
    re.findall(
        r"\S+",
        """
    the and for are but not you your all any can had her was one our out has have him
    his how its let may who did get got use with this that from they them then than what
    when where which will would could should there their about into just like also some
    more most very much been were here want need make know think please thanks thank
    hello okay yes yeah sure it's i'm don't does doing done todo next step decided
    decide decision going only each other these those because after before again still
    well good now noted sure right forgotten
    user users assistant
    """,
    )
)

DECISION = re.compile(
    r"決定|決議|改用|採用|選擇|確定|就用|優先|定案|同意|改成|延到|延後|"
    r"\bdecid\w*|\bdecision\b|\bagreed\b|\bwe'?ll go with\b|\bgo with\b|\bchose\b|"
    r"\bpicked\b|\bvoted\b|\binstead\b|\bswitch(?:ed)? to\b|\bpriorit\w*",
    re.IGNORECASE,
)
TODO = re.compile(
    r"TODO|待辦|下一步|待測|要做|記得|明天|之後要|需要|提醒|必須|務必|別忘|"
    r"(?:週|周|星期)[一二三四五六日天]前|(?<!\d)\d+\s*月\s*\d+\s*[日號]前|月底前|下班前|"
    r"\bto-?do\b|\bnext step\b|\bneed to\b|\bmust\b|\bremind\b|\bfollow up\b|\btomorrow\b|"
    r"\bhave to\b|\bshould\b|\bremember to\b|\bdon'?t forget\b|"
    r"\b(?:will|'ll)\s+(?:handle|take care of|set up|write|send|prepare|follow up)\b|"
    r"\b(?:by|before)\s+(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tonight|the \d{1,2}"
    r"(?:st|nd|rd|th)|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2})\b",
    re.IGNORECASE,
)
GOAL = re.compile(
    r"想要|目標|希望|打算|幫我|如何|怎麼|怎樣|計畫|"
    r"\bwant\b|\bgoal\b|\bplan(?:ning)? to\b|\btrying to\b|\bhow (?:do|to|can)\b|\bhelp me\b",
    re.IGNORECASE,
)
# Short messages holding these words get a summary too.
SUMMARY_KEYWORDS = re.compile(r"決定|下一步|TODO|優先", re.IGNORECASE)

_DATE = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}月\d{1,2}[日號]|\d{1,2}/\d{1,2}|"
    r"(?:今天|明天|後天|昨天|前天|[下本這][週周][一二三四五六日末]?|週[一二三四五六日末]|星期[一二三四五六日天])|"
    r"\b(?:today|tomorrow|yesterday|next week|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?:NT\$|US\$|\$)?\d+(?:[.,]\d+)*\s*"
    r"(?:%|元|塊|萬|千|百|個|次|人|小時|分鐘|天|週|月|年|公里|公斤|km|kg|GB|MB|ms|USD|TWD)?",
    re.IGNORECASE,
)
_NAME = re.compile(
    r"(?<![A-Za-z])[A-Z][a-z]+(?:[A-Z][a-z]+)*(?![a-z])|"
    r"[老小阿][\u4e00-\u9fff](?=[\u4e00-\u9fff]?)|"
    r"[\u4e00-\u9fff]{1,2}(?:先生|小姐|老師|經理|醫生)"
)
_CHITCHAT = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|ok|okay|lol|haha+|good (?:morning|night)|"
    r"how are you|bye|你好|您好|哈+|嗨|謝謝|早安|午安|晚安|好的|好喔|嗯+|掰掰|吃飽了嗎|"
    r"在嗎|辛苦了)[\s!！。.~～?？]*$",
    re.IGNORECASE,
)
_CHITCHAT_TOPICS = re.compile(
    r"天氣|吃飯|午餐|晚餐|體操|運動|好累|哈哈|笑死|weather|lunch|dinner|lol|haha",
    re.IGNORECASE,
)
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)、])\s+")
# Clause ends: Chinese commas and semicolons; English ones only before a space (not 1,200).
_CLAUSE_SPLIT = re.compile(r"(?<=[，；;])|(?<=[,:：])(?=\s)")
_MIN_CLAUSE_CHARS = 5
_MAX_CARRY = 200
# Words that open a clause without adding to it ("so", "另外", "第二，"): cut to save room.
_LEAD = re.compile(
    r"^(?:(?:so|and|but|also|then|or|plus)\b[\s,]*|(?:然後|另外|還有|所以|而且|並且|不過)[，,\s]*"
    r"|第[一二三四五六七八九十]+[，,、：:]\s*)+",
    re.IGNORECASE,
)
# What the user asks the assistant for: a question, or "can you / 幫我 / 請…".
REQUEST = re.compile(
    r"[?？]\s*$|^(?:please|can you|could you|would you|help me)\b"
    r"|^(?:請|请|麻煩|麻烦|你可以|你能|能不能|可不可以|幫我|帮我)",
    re.IGNORECASE,
)
_FIELD_PIECES = {"Goal": 2, "Decision": 3, "Todo": 3, "Facts": 4}


def sentences(text: str) -> list[str]:
    """Split text into sentences (Chinese and English punctuation, and line breaks)."""
    parts = (s.strip(" \t-*•>").rstrip("。；;，,") for s in _SENTENCE_END.split(text))
    return [p for p in parts if p and not p.startswith("```")]


def clauses(sentence: str) -> list[str]:
    """Split a sentence at its commas, semicolons and colons into clauses.

    A question stays whole (it is one request); a clause too short to stand alone ("第一，",
    "Also,") or a label ending in a colon ("TODO：", "Next step:") joins the next one, so a
    marker stays with what it marks. English commas split only before a space (not 1,200).
    """
    if sentence.rstrip().endswith(("?", "？")):
        return [sentence.strip()]
    out: list[str] = []
    carry = ""
    for part in _CLAUSE_SPLIT.split(sentence):
        part = carry + part
        bare = part.strip().rstrip("，,；;")
        short = len("".join(bare.split())) < _MIN_CLAUSE_CHARS or bare.endswith((":", "："))
        # A carry past _MAX_CARRY is a clause of its own: 100,000 commas (or "a: " labels)
        # would otherwise grow one carry and re-read it at every part, n^2.
        if short and len(carry) < _MAX_CARRY:
            carry = part
            continue
        carry = ""
        out.append(_LEAD.sub("", bare.strip()).rstrip("."))
    tail = carry.strip().rstrip("，,；;：:.")
    if tail:
        out = [*out[:-1], _glue([out[-1], tail])] if out else [tail]
    return [c for c in out if c]


def structured_fields(text: str, from_user: bool) -> dict[str, str]:
    """The Goal / Decision / Todo / Facts of one message, by rules over its clauses.

    Each clause is a decision, a todo or a goal by its own words; a clause without such a
    word that follows a decision or a todo in the same sentence continues it ("決定不請搬家
    公司，自己租車"). A user's question is their request: with a stated goal it makes the
    Goal (the first sentence when there is neither). Facts are the remaining clauses that
    hold numbers, dates or names (any remaining ones when none do). Clauses of one sentence
    that land in the same field stay one piece; pieces are joined with "；".
    """
    units: list[tuple[int, str, str]] = []  # (sentence, clause, field)
    for n, sentence in enumerate(sentences(text)):
        for clause in clauses(sentence):
            label = ""
            if from_user and REQUEST.search(clause):
                label = "Goal"
            elif DECISION.search(clause):
                label = "Decision"
            elif TODO.search(clause):
                label = "Todo"
            elif GOAL.search(clause):
                label = "Goal"
            elif units and units[-1][0] == n and units[-1][2] in ("Decision", "Todo"):
                label = units[-1][2]
            units.append((n, clause, label))
    goals = [i for i, u in enumerate(units) if u[2] == "Goal"]
    asked = [i for i in goals if from_user and REQUEST.search(units[i][1])]
    stated = [i for i in goals if i not in asked]
    picked_goal = sorted(set(stated[:1] + asked[-1:]))
    if not picked_goal and units:
        picked_goal = [i for i, u in enumerate(units) if u[0] == units[0][0]]
    rest = [i for i, u in enumerate(units) if not u[2] and i not in picked_goal]
    factual = [i for i in rest if numbers(units[i][1]) or dates(units[i][1]) or names(units[i][1])]
    chosen = {
        "Goal": picked_goal,
        "Decision": [i for i, u in enumerate(units) if u[2] == "Decision"],
        "Todo": [i for i, u in enumerate(units) if u[2] == "Todo"],
        "Facts": factual or rest,
    }
    return {name: _join(units, idx, _FIELD_PIECES[name]) for name, idx in chosen.items()}


def _join(units: list[tuple[int, str, str]], idx: list[int], limit: int) -> str:
    """The clauses at ``idx`` as at most ``limit`` pieces (one per sentence), joined by "；"."""
    pieces: list[tuple[int, list[str]]] = []
    for i in idx:
        n, clause, _ = units[i]
        if pieces and pieces[-1][0] == n:
            pieces[-1][1].append(clause)
        elif len(pieces) < limit:
            pieces.append((n, [clause]))
    return "；".join(_glue(parts) for _, parts in pieces)


def _glue(parts: list[str]) -> str:
    out = parts[0]
    for part in parts[1:]:
        out += (", " if out[-1:].isascii() and part[:1].isascii() else "，") + part
    return out


def has_list_or_code(text: str) -> bool:
    """Whether the text holds a list (two or more list lines) or a code block."""
    if "```" in text or ("\t" in text and "\n" in text):
        return True
    return sum(1 for line in text.splitlines() if _LIST_LINE.match(line)) >= 2


def is_chitchat(text: str) -> bool:
    """Whether a message is small talk (greetings, thanks, laughter, weather, meals)."""
    stripped = text.strip()
    if not stripped:
        return True
    if _CHITCHAT.match(stripped):
        return True
    short = len(stripped) <= 20
    return short and bool(_CHITCHAT_TOPICS.search(stripped)) and not DECISION.search(stripped)


def _cjk_terms(run: str) -> list[tuple[int, str]]:
    """The terms of a CJK run with the offset where each first appears in it."""
    terms: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    start = 0
    for end, ch in enumerate(run + "的"):  # the sentinel flushes the last segment
        if ch not in _CJK_STOP_CHARS:
            continue
        segment = run[start:end]
        if 2 <= len(segment) <= 4:
            terms.append((start, segment))
        elif len(segment) > 4:
            terms.extend((start + i, segment[i : i + 2]) for i in range(0, len(segment) - 1, 2))
        start = end + 1
    # Each term at its first occurrence in the run (run.find(term)), found in one pass over
    # the run's 2-4 character windows instead of one scan of the run per term (n^2).
    wanted = {t for _, t in terms}
    for i in range(len(run) - 1):
        for size in (2, 3, 4):
            window = run[i : i + size]
            if window in wanted:
                seen.setdefault(window, i)
    return [(seen[t], t) for _, t in terms if t not in _CJK_STOPWORDS]


def terms(text: str) -> list[str]:
    """Candidate keywords in order of appearance (English words, CJK terms)."""
    found: list[tuple[int, str]] = []
    for m in _EN_WORD.finditer(text):
        word = m.group(0).strip(".-")
        if len(word) >= 3 and word.lower() not in _EN_STOPWORDS:
            found.append((m.start(), word))
    for m in _CJK_RUN.finditer(text):
        found.extend((m.start() + offset, term) for offset, term in _cjk_terms(m.group(0)))
    return [t for _, t in sorted(found)]


def keywords(texts: Iterable[str], limit: int = 5) -> list[str]:
    """The most frequent terms, ties broken by first appearance (case-insensitive)."""
    counts: Counter[str] = Counter()
    first: dict[str, tuple[int, str]] = {}
    order = 0
    for text in texts:
        for term in terms(text):
            key = term.lower()
            counts[key] += 1
            if key not in first:
                first[key] = (order, term)
            order += 1
    ranked = sorted(counts, key=lambda k: (-counts[k], first[k][0]))
    return [first[k][1] for k in ranked[:limit]]


def dates(text: str) -> list[str]:
    """Dates and relative days named in the text, deduplicated in order."""
    return _dedupe(m.group(0) for m in _DATE.finditer(text))


def numbers(text: str) -> list[str]:
    """Numbers (with their units) that are not part of a date."""
    spans = [m.span() for m in _DATE.finditer(text)]
    out = []
    at = 0  # both lists run left to right: one walk, not every span per number (n^2)
    for m in _NUMBER.finditer(text):
        while at < len(spans) and spans[at][1] <= m.start():
            at += 1
        if at < len(spans) and spans[at][0] <= m.start():
            continue
        value = m.group(0).strip()
        if value and any(c.isdigit() for c in value):
            out.append(value)
    return _dedupe(out)


def names(text: str) -> list[str]:
    """Likely names: capitalised words not opening a sentence, 老X / X先生 forms."""
    out = []
    days = {d.lower() for d in dates(text)}
    for m in _NAME.finditer(text):
        start = m.start()
        end = end_before(text, start)  # not text[:start].rstrip(): that is once per name
        opens_sentence = not end or text[end - 1] in ".!?。！？\n"
        word = m.group(0)
        if word.lower() in days or (
            word.isascii() and (opens_sentence or word.lower() in _EN_STOPWORDS)
        ):
            continue
        out.append(word)
    return _dedupe(out)


def clip(text: str, max_chars: int) -> str:
    """Cut text to ``max_chars`` characters, marking a cut with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - 1)].rstrip() + "…"


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
