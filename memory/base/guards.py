"""Sensitive-data guard: secrets are never stored anywhere.

:func:`scan` finds passwords, PINs and one-time codes, payment card numbers, API keys and
tokens, private keys and national id numbers in Chinese and English text and says why;
:func:`mask` replaces what it finds with ``[REDACTED]``. The confirmation service refuses a
proposal that :func:`scan` flags. :func:`mask` is the one function every writer of
user-derived text calls before the text reaches a file, a database row or a log line
(sessions, daily logs, summaries, keywords, topics, sections, short-term rows); text derived
from a message (a reply, a summary) is masked with ``known=secrets_in(message)`` too, so a
model that repeats a secret without its "password" context cannot store it either.

Passwords are found after a keyword: with a separator ("password: x", "密碼是x") any word
that is not plainly ordinary talk; without one ("password x", "密碼x") only a value that
looks like a password (it holds a digit). PINs and one-time codes are 4-8 digits after their
keyword ("PIN 1234", "驗證碼 123456"), so prices, dates and phone numbers stay as they are.

Numbers are only flagged when they pass their checksum (Luhn for cards, the Taiwan and China
id check digits, the SSN number rules), so phone numbers, order numbers and dates are left
alone. Digits are delimited by "not a digit" rather than ``\\b``: in ``卡號4111...`` there is no
word boundary between 號 and 4.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from memory.base.memo import TextMemo

REDACTED = "[REDACTED]"
# What stands where forgotten text was (logs, summaries, sessions, stored rows).
FORGOTTEN = "[forgotten]"

# What a secret can be; a refusal names them (the sentences are agent.texts' "secret_<kind>").
SecretKind = Literal[
    "password",
    "card_number",
    "api_key",
    "private_key",
    "national_id",
    "card_security_code",
    "pin_code",
]
SECRET_KINDS: tuple[SecretKind, ...] = get_args(SecretKind)


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text: its kind and the span of the secret value."""

    kind: SecretKind
    start: int
    end: int


_SEP = r"\s*(?:is|are|=|:|：|是|為|为|係|改成|改為|改为|換成|换成|設成|設為|设为)\s*"
_PW_WORD = (
    r"(?<![A-Za-z])(?:password|passwd|passcode|passphrase|pass\s?word|pwd|pw"
    r"|pin(?:\s?(?:code|number|碼|码))?)(?![A-Za-z])"
)
_PW_WORD_ZH = r"(?:密碼|密码|口令|通關密語|通关密语|暗碼|暗码)"
# "password for gmail: x": a short qualifier may sit between the keyword and the separator.
_PW_FOR = r"(?:\s+(?:for|of|to)\s+[^\s:：=]{1,30}?)?"
_PASSWORD = re.compile(
    rf"(?:{_PW_WORD}|{_PW_WORD_ZH}){_PW_FOR}{_SEP}"
    r"[\"'「『]?(?P<value>[^\s\"'「」『』，。,；;？！、]{3,})",
    re.IGNORECASE,
)
# No separator: "password hunter2", "密碼hunter2", "門禁密碼 5566" (ASCII values only).
_PASSWORD_BARE = re.compile(
    rf"(?:{_PW_WORD}\s+|{_PW_WORD_ZH}\s*)(?P<value>[!-~]{{3,}})",
    re.IGNORECASE,
)
_PIN = re.compile(
    r"(?:(?<![A-Za-z])(?:pin(?:\s?(?:code|number|碼|码))?|otp|2fa(?:\s?code)?"
    r"|one[-\s]?time\s?(?:pass)?code|verification\s?code|auth(?:entication)?\s?code"
    r"|security\s?pin)(?![A-Za-z])"
    r"|驗證碼|验证码|認證碼|认证码|動態密碼|动态密码|一次性密碼|一次性密码|提款密碼|提款密码)"
    r"\s*(?:is|=|:|：|是|為|为)?\s*(?P<value>(?<!\d)\d{4,8}(?!\d))",
    re.IGNORECASE,
)
_CVV = re.compile(
    r"(?:cvv2?|cvc2?|security\s+code|安全碼|安全码|背面三碼|檢查碼)"
    r"\s*(?:is|=|:|：|是|為|为)?\s*(?P<value>(?<!\d)\d{3,4}(?!\d))",
    re.IGNORECASE,
)
_TOKEN_PATTERNS = [
    re.compile(r"(?<![A-Za-z0-9])(?P<value>sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,})"),
    re.compile(r"(?<![A-Za-z0-9])(?P<value>(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,}))"),
    re.compile(r"(?<![A-Za-z0-9])(?P<value>(?:AKIA|ASIA)[0-9A-Z]{16})(?![0-9A-Z])"),
    re.compile(r"(?<![A-Za-z0-9])(?P<value>xox[abposr]-[A-Za-z0-9-]{10,})"),
    re.compile(r"(?<![A-Za-z0-9])(?P<value>AIza[0-9A-Za-z_-]{35})"),
    re.compile(r"(?<![A-Za-z0-9])(?P<value>glpat-[A-Za-z0-9_-]{20,})"),
    # Telegram bot tokens: "123456789:AA..." (35 characters after the colon).
    re.compile(r"(?<!\d)(?P<value>\d{8,10}:[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])"),
    # JSON Web Tokens.
    re.compile(r"(?P<value>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"),
]
# A long random-looking value after a key/token word: "api key: 3f9a...", "金鑰是 ...".
_KEYWORD_SECRET = re.compile(
    r"(?:api[\s_-]?key|access[\s_-]?key|secret(?:[\s_-]?key)?|token|bearer|auth[\s_-]?key"
    r"|client[\s_-]?secret|金鑰|金钥|密鑰|密钥|私鑰|令牌|權杖|权杖|存取碼)"
    r"\s*(?:is|=|:|：|是|為|为)?\s*[\"'「]?(?P<value>[A-Za-z0-9+/_=.-]{16,})",
    re.IGNORECASE,
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
    re.DOTALL,
)
_CARD = re.compile(r"(?<![\d-])(?P<value>\d(?:[ -]?\d){12,18})(?![\d-])")
_TW_ID = re.compile(r"(?<![A-Za-z0-9])(?P<value>[A-Za-z][1289]\d{8})(?!\d)")
_CN_ID = re.compile(r"(?<![\dA-Za-z])(?P<value>\d{17}[\dXx])(?![\dA-Za-z])")
_SSN = re.compile(r"(?<![\d-])(?P<value>\d{3}-\d{2}-\d{4})(?![\d-])")
_SSN_BARE = re.compile(
    r"(?:ssn|social\s+security(?:\s+number)?|社會安全號碼?)\s*(?:is|=|:|：|是|為)?\s*"
    r"(?P<value>(?<!\d)\d{9}(?!\d))",
    re.IGNORECASE,
)

# Taiwan: letter -> two-digit area code used by the check digit.
_TW_LETTERS = {
    c: n
    for c, n in zip(
        "ABCDEFGHJKLMNPQRSTUVXYWZIO",
        range(10, 36),
        strict=True,
    )
}
_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_CHECK = "10X98765432"


def luhn_valid(digits: str) -> bool:
    """Luhn checksum: double every second digit from the right; the sum is divisible by 10."""
    if not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def taiwan_id_valid(value: str) -> bool:
    """Taiwan national id (A123456789): weights 1,9,8,...,1,1 over code+digits, sum % 10 == 0."""
    if len(value) != 10 or not value[1:].isdigit():
        return False
    code = _TW_LETTERS.get(value[0].upper())
    if code is None:
        return False
    nums = [code // 10, code % 10, *(int(c) for c in value[1:])]
    weights = (1, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1)
    return sum(n * w for n, w in zip(nums, weights, strict=True)) % 10 == 0


def china_id_valid(value: str) -> bool:
    """China resident id (18 characters): ISO 7064 MOD 11-2 check digit and a plausible date."""
    if len(value) != 18 or not value[:17].isdigit():
        return False
    year, month, day = int(value[6:10]), int(value[10:12]), int(value[12:14])
    if not (1900 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    total = sum(int(c) * w for c, w in zip(value[:17], _CN_WEIGHTS, strict=True))
    return _CN_CHECK[total % 11] == value[17].upper()


def ssn_valid(value: str) -> bool:
    """US SSN rules: area not 000/666/9xx, group not 00, serial not 0000."""
    digits = value.replace("-", "")
    if len(digits) != 9 or not digits.isdigit():
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


# "the password is required", "密碼是多少": a separator followed by a word that is no secret.
_NOT_A_PASSWORD = {
    "required",
    "incorrect",
    "wrong",
    "invalid",
    "expired",
    "changed",
    "needed",
    "not",
    "too",
    "very",
    "the",
    "same",
    "different",
    "stored",
    "saved",
    "reset",
    "empty",
    "missing",
    "forgotten",
    "set",
    "case-sensitive",
    "what",
    "whatever",
    "unknown",
}
_QUESTION_WORDS = ("什麼", "甚麼", "什么", "多少", "啥", "幾", "几", "哪")


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_TRAILING = ".,!?;:)]}>"


def _password_span(text: str, start: int, end: int) -> int:
    """Where a password value really ends: before the CJK text or closing punctuation after it.

    ``密碼改成abc12345了`` holds the value ``abc12345``; ``password: hunter2.`` ends before
    the full stop.
    """
    value = text[start:end]
    if value and not _CJK.match(value[0]):
        cut = _CJK.search(value)
        if cut:
            end = start + cut.start()
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return end


_KEYWORD_ONLY = re.compile(rf"^(?:{_PW_WORD}|{_PW_WORD_ZH})$", re.IGNORECASE)


def _password_ok(value: str) -> bool:
    word = value.lower()
    return (
        len(word) >= 3
        and word not in _NOT_A_PASSWORD
        and not word.startswith(_QUESTION_WORDS)
        and not _KEYWORD_ONLY.match(value)  # "密碼是 password: x": the value comes after
    )


_DATE_LIKE = re.compile(r"^\d{1,4}[-/.]\d{1,2}(?:[-/.]\d{1,4})?$|^\d{1,2}:\d{2}$")


def _bare_password_ok(value: str) -> bool:
    # Without "is" or ":", only a value that looks like a password is one ("password manager"
    # and "密碼 reset" are talk about passwords, "密碼 2026-03-04 到期" names a date).
    return (
        len(value) >= 4
        and _password_ok(value)
        and any(c.isdigit() for c in value)
        and not _DATE_LIKE.match(value)
    )


def _passwords(text: str) -> list[Finding]:
    found = []
    for pattern, check in ((_PASSWORD, _password_ok), (_PASSWORD_BARE, _bare_password_ok)):
        pos = 0
        # Searched from each value's start, not its end: in "密碼是 password: x" the first
        # match's "value" is the next keyword, whose own value is the secret.
        while (m := pattern.search(text, pos)) is not None:
            start = m.start("value")
            pos = start
            if text.startswith(REDACTED, start):  # masked already: masking twice changes nothing
                pos = start + len(REDACTED)
                continue
            end = _password_span(text, start, m.end("value"))
            if check(text[start:end]):
                found.append(Finding("password", start, end))
                pos = end
    return found


def _card_ok(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits)


_Check = Callable[[str], bool]
_RULES: list[tuple[SecretKind, re.Pattern[str], _Check | None]] = [
    ("private_key", _PRIVATE_KEY, None),
    *[("api_key", p, None) for p in _TOKEN_PATTERNS],
    ("pin_code", _PIN, None),
    ("card_security_code", _CVV, None),
    ("national_id", _TW_ID, taiwan_id_valid),
    ("national_id", _CN_ID, china_id_valid),
    ("national_id", _SSN, ssn_valid),
    ("national_id", _SSN_BARE, ssn_valid),
    ("card_number", _CARD, _card_ok),
]


def _looks_random(value: str) -> bool:
    # A key word followed by an ordinary word ("token bucket algorithm") is not a secret.
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (has_digit and has_alpha) or len(value) >= 32


def scan(text: str) -> list[Finding]:
    """Every secret in ``text``, in order of position, overlapping findings merged."""
    found: list[Finding] = []
    for kind, pattern, check in _RULES:
        for m in pattern.finditer(text):
            has_value = "value" in pattern.groupindex
            start, end = m.span("value") if has_value else m.span()
            value = text[start:end]
            if check is not None and not check(value):
                continue
            found.append(Finding(kind, start, end))
    for m in _KEYWORD_SECRET.finditer(text):
        if _looks_random(m.group("value")):
            found.append(Finding("api_key", *m.span("value")))
    found.extend(_passwords(text))  # after the rules: "PIN 1234" is a PIN before a password
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            continue  # already covered by an earlier, longer finding
        merged.append(f)
    return merged


def _masked(text: str) -> tuple[str, frozenset[str]]:
    parts, at, values = [], 0, set()
    for f in scan(text):
        parts += [text[at : f.start], REDACTED]
        values.add(text[f.start : f.end])
        at = f.end
    parts.append(text[at:])
    return "".join(parts), frozenset(values)


# A session is saved after every turn with mostly the same messages in it: scanning each
# message once (0.3 ms for a few hundred characters, 0.2 s for 100 KB) keeps turns fast.
_masked_memo = TextMemo(_masked, budget=2_000_000)


def secrets_in(*texts: str) -> frozenset[str]:
    """The secret values found in ``texts`` (what a text derived from them must not repeat)."""
    return frozenset().union(*(_masked_memo(t)[1] for t in texts))


def mask(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``.

    ``known`` are secrets found in the text this one was derived from (see
    :func:`secrets_in`): they are masked wherever they stand as a whole word, even with no
    "password" or "PIN" before them, as a model's summary or keyword list may put them.
    """
    out = _masked_memo(text)[0]
    for value in sorted(set(known), key=len, reverse=True):
        if len(value) >= 3 and value != REDACTED:
            out = re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", REDACTED, out)
    return out
