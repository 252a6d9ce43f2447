"""The words and patterns of ``/remind`` phrases (Chinese and English), and numeral reading.

Each category is a list of patterns; the parser takes, per category, the leftmost match of
any of its patterns. Categories are tried in the order of :data:`CATEGORIES`, so a longer
phrase ("每週一", "this morning") is consumed before a shorter one could claim part of it.
"""

from __future__ import annotations

import math
import re

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "兩": 2, "两": 2, "三": 3, "四": 4}
_CN_DIGITS |= {"五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_EN_NUMBERS |= {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "fifteen": 15}
_EN_NUMBERS |= {"twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "ninety": 90}


def number(raw: str) -> float:
    """Read ``12``, ``1.5``, ``十二``, ``二十三``, ``兩``, ``半``, ``an``, ``half an``.

    :class:`ValueError` for a run of numerals that is no number ("十十", "百百").
    """
    raw = raw.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", raw):
        return float(raw)  # 400 digits read as inf, never an error
    if raw in ("半", "half a", "half an", "half"):
        return 0.5
    if raw in _EN_NUMBERS:
        return float(_EN_NUMBERS[raw])
    try:
        return float(_chinese(raw))
    except KeyError:
        raise ValueError(f"not a number: {raw!r}") from None
    except OverflowError:  # 400 numerals: no float holds it, and no reminder is that far
        return math.inf


def _chinese(raw: str) -> int:
    total = 0
    if "百" in raw:
        head, _, raw = raw.partition("百")
        total += (_CN_DIGITS.get(head, 1) if head else 1) * 100
    if "十" in raw:
        head, _, tail = raw.partition("十")
        total += (_CN_DIGITS[head] if head else 1) * 10
        raw = tail
    if raw:
        digits = [_CN_DIGITS[c] for c in raw]
        value = 0
        for d in digits:
            value = value * 10 + d
        total += value
    return total


def integer(raw: str) -> int:
    """:func:`number` as an int (hours, minutes, days)."""
    return int(number(raw))


CN = r"[零〇一二兩两三四五六七八九十]{1,3}"
NUM = rf"(?:\d{{1,2}}|{CN})"
WD_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WD_ZH_CLASS = "[一二三四五六日天]"
_WEEK_ZH = r"(?:週|周|星期|禮拜|礼拜)"
WD_EN = {
    "mon": 0,
    "tue": 1,
    "wed": 2,
    "thu": 3,
    "fri": 4,
    "sat": 5,
    "sun": 6,
}
_WD_FULL = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_WD_ANY = (
    r"(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?"
    r"|sat(?:urday)?|sun(?:day)?)"
)
MONTHS_EN = {
    m: i + 1
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}
MON = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORD = r"(?:st|nd|rd|th)?"
_CN_RUN = "零一二兩两三四五六七八九十百"
_AFTER = r"(?:之後|之后|以後|以后|後|后)"
_ZH_UNIT = r"(?P<unit>分鐘|分钟|分|小時|小时|鐘頭|钟头|個鐘|天|週|周|星期|禮拜)"
_EN_N = (
    r"(?P<n>\d+(?:\.\d+)?|half an?|an?|one|two|three|four|five|six|seven|eight|nine|ten"
    r"|fifteen|twenty|thirty|forty-five|forty|ninety)"
)
_EN_UNIT = r"(?P<unit>minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wks?)"

# Day words: offset in days and the period of day they imply.
DAY_WORDS: dict[str, tuple[int, str | None]] = {
    "大後天": (3, None),
    "大后天": (3, None),
    "後天": (2, None),
    "后天": (2, None),
    "明天": (1, None),
    "明日": (1, None),
    "明早": (1, "morning"),
    "明晚": (1, "evening"),
    "今天": (0, None),
    "今日": (0, None),
    "今早": (0, "morning"),
    "今晚": (0, "evening"),
    "今夜": (0, "evening"),
    "today": (0, None),
    "tonight": (0, "evening"),
    "tomorrow": (1, None),
    "tmr": (1, None),
    "tmrw": (1, None),
}
PERIOD_WORDS = {
    "凌晨": "dawn",
    "半夜": "dawn",
    "清晨": "morning",
    "早上": "morning",
    "早晨": "morning",
    "上午": "morning",
    "早": "morning",
    "中午": "noon",
    "下午": "afternoon",
    "午後": "afternoon",
    "傍晚": "evening",
    "晚上": "evening",
    "晚": "evening",
    "夜裡": "evening",
    "夜里": "evening",
    "晚間": "evening",
    "晚间": "evening",
    "morning": "morning",
    "afternoon": "afternoon",
    "evening": "evening",
    "night": "evening",
}


def _c(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


RELATIVE = _c(
    rf"(?<![點点:\d{_CN_RUN}])(?P<n>\d+(?:\.\d+)?|[{_CN_RUN}]+|半)\s*(?:(?:個|个)\s*)?"
    rf"(?:(?P<half>半)\s*)?{_ZH_UNIT}\s*(?:(?P<half2>半)\s*)?(?:(?:鐘|钟)\s*)?{_AFTER}",
    rf"(?:過|过)\s*(?P<n>\d+(?:\.\d+)?|[{_CN_RUN}]+|半)\s*(?:(?:個|个)\s*)?"
    rf"(?:(?P<half>半)\s*)?{_ZH_UNIT}(?:\s*(?P<half2>半))?",
    rf"\b(?:in|after)\s+{_EN_N}\s*{_EN_UNIT}(?P<half>\s+and\s+a\s+half)?\b(?:\s+from\s+now)?",
    rf"\b{_EN_N}\s*{_EN_UNIT}(?P<half>\s+and\s+a\s+half)?\s+from\s+now\b",
)
RECURRENCE = _c(
    rf"每(?:一)?(?:個|个)?\s*{_WEEK_ZH}\s*(?P<wd>{_WD_ZH_CLASS})",
    rf"每(?:個|个)?月\s*(?:的)?\s*(?P<d>{NUM})\s*(?:號|号|日)",
    r"每(?:一)?(?:天|日)(?!子)",
    r"每(?:個|个)?(?P<period>晚上|早上|晚|早)",
    r"每年",
    rf"\b(?:every|each)\s+(?P<wd>{_WD_ANY})\b",
    rf"\b(?:on\s+)?(?P<wd>{_WD_FULL})s\b",
    rf"\b(?:(?:every|each)\s+month|monthly)\s+on\s+the\s+(?P<d>\d{{1,2}}){_ORD}\b",
    rf"\b(?:on\s+)?the\s+(?P<d>\d{{1,2}}){_ORD}\s+of\s+(?:every|each)\s+month\b",
    r"\b(?:every\s*day|everyday|each\s+day|daily)\b",
    r"\b(?:every|each)\s+(?P<period>morning|evening|night)\b",
    r"\b(?:every\s+year|each\s+year|yearly|annually)\b",
)
DATE = _c(
    rf"(?:(?P<y>\d{{4}})\s*年\s*)?(?P<mo>{NUM})\s*月\s*(?P<d>{NUM})\s*(?:日|號|号)?",
    r"(?:\bon\s+)?(?<![\d/])(?P<y>\d{4})[-/.](?P<mo>\d{1,2})[-/.](?P<d>\d{1,2})(?![\d/])",
    r"(?:\bon\s+)?(?<![\d/.:])(?P<mo>\d{1,2})/(?P<d>\d{1,2})(?![\d/])",
    rf"\b(?:on\s+)?(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mon>{MON})\b\.?"
    r"(?:,?\s+(?P<y>\d{4})\b)?",
    rf"\b(?:on\s+)?(?P<mon>{MON})\.?\s+(?P<d>\d{{1,2}}){_ORD}\b(?:,?\s+(?P<y>\d{{4}})\b)?",
    rf"(?<![月\d])(?P<d>{NUM})\s*(?:號|号)",
)
DAY = _c(
    r"大後天|大后天|後天|后天|明天|明日|明早|明晚|今天|今日|今早|今晚|今夜",
    rf"(?P<next>下)(?:個|个)?\s*{_WEEK_ZH}\s*(?P<wd>{_WD_ZH_CLASS})",
    rf"(?:(?:這|这|本|這個|这个|本個|本个|個|个)\s*)?{_WEEK_ZH}\s*(?P<wd>{_WD_ZH_CLASS})",
    r"\b(?:the\s+)?day\s+after\s+tomorrow\b",
    r"\b(?:tomorrow|tmrw?|today|tonight)\b",
    r"\bthis\s+(?P<period>morning|afternoon|evening)\b",
    rf"\b(?P<next>next)\s+(?P<wd>{_WD_ANY})\b",
    rf"\b(?:on|this)\s+(?P<wd>{_WD_ANY})\b",
    rf"\b(?P<wd>{_WD_FULL})\b",
)
PERIOD = _c(
    r"凌晨|半夜|清晨|早上|早晨|上午|中午|下午(?!茶)|午後|傍晚|晚上|夜裡|夜里|晚間|晚间",
    r"\b(?:in\s+the\s+)?(?P<period>morning|afternoon|evening)\b",
    r"\b(?:at\s+)?(?P<period>night)\b",
)
CLOCK = _c(
    rf"(?P<h>{NUM})\s*(?:點鐘|点钟|點|点)"
    rf"(?:\s*(?P<half>半)|\s*(?P<q>[一二三])\s*刻|\s*(?P<m>{NUM})\s*(?:分)?)?",
    r"(?P<h>\d{1,2})\s*[時时](?:\s*(?P<m>\d{1,2})\s*分)?",
    r"(?:\b(?:at|by)\s*|@\s*)?(?<![\d/:.])(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s*"
    r"(?P<ap>a\.?m\.?|p\.?m\.?)(?![a-z])",
    r"(?:\b(?:at|by)\s*|@\s*)?(?<![\d/:.])(?P<h>\d{1,2})\s*:\s*(?P<m>\d{2})(?!\d)",
    r"\b(?:at|by)\s+(?P<h>\d{1,2})(?:\s*o'?clock)?(?![\d:/.])\b",
    r"\b(?P<h>\d{1,2})\s*o'?clock\b",
    r"\b(?:at\s+)?(?P<named>noon|midday|midnight)\b",
)
CATEGORIES: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...] = (
    ("relative", RELATIVE),
    ("recurrence", RECURRENCE),
    ("date", DATE),
    ("day", DAY),
    ("clock", CLOCK),
    ("period", PERIOD),
)

# What is left of a phrase once its time is taken out: the words that ask for a reminder.
FILLER = re.compile(
    r"(?:請|请)?(?:幫我|帮我)?(?:提醒(?:我|一下)?|叫我|記得|记得)(?:要)?"
    r"|\b(?:please\s+)?remind\s+me(?:\s+(?:to|that|about|of))?\b",
    re.IGNORECASE,
)
EDGE = ",，.。:：;；!！、-–—"  # stripped from both ends of the text (with whitespace)
LEAD_WORDS = re.compile(r"^(?:(?:to|that|about|and)\s+|[的要在])", re.IGNORECASE)
_CJK = r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]"
CJK_GAP = re.compile(rf"(?<={_CJK})\s+(?={_CJK})")
WIDE = str.maketrans("０１２３４５６７８９：／", "0123456789:/")
