"""Sensitive-data guard: secrets are never stored anywhere.

:func:`scan` finds passwords, PINs and one-time codes, payment card numbers, bank accounts,
API keys and tokens, private keys and national id numbers and says why; :func:`mask` replaces
what it finds with ``[REDACTED]``. The confirmation service refuses a proposal that
:func:`scan` flags. :func:`mask` is the one function every writer of user-derived text calls
before the text reaches a file, a database row or a log line (sessions, daily logs,
summaries, keywords, topics, sections, short-term rows); text derived from a message (a reply,
a summary) is masked with ``known=secrets_in(message)`` too, so a model that repeats a secret
without its "password" context cannot store it either.

What is found, and how: a secret said after its keyword, in Chinese, English and the big
European languages, with any separator, quoted or bare (:mod:`memory.base.secret_phrases`,
over the words of :mod:`memory.base.secret_words`); numbers that pass their checksum, cards in
any grouping and IBANs (:mod:`memory.base.secret_numbers`), Taiwan and China ids, SSNs; and
tokens by their shape (``sk-``, ``ghp_``, ``AKIA``, JWTs, PEM private keys). Every pattern is
linear in the text: bounded runs, or runs read once from the start of a token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import get_args

from memory.base.memo import TextMemo
from memory.base.secret_numbers import (
    card_numbers,
    china_id_valid,
    ibans,
    luhn_valid,
    ssn_valid,
    taiwan_id_valid,
)
from memory.base.secret_phrases import REDACTED, phrase_secrets
from memory.base.secret_words import SecretKind

__all__ = [
    "FORGOTTEN",
    "REDACTED",
    "SECRET_KINDS",
    "Finding",
    "SecretKind",
    "china_id_valid",
    "luhn_valid",
    "mask",
    "scan",
    "secrets_in",
    "ssn_valid",
    "taiwan_id_valid",
]
# What stands where forgotten text was (logs, summaries, sessions, stored rows).
FORGOTTEN = "[forgotten]"

# What a secret can be; a refusal names them (the sentences are agent.texts' "secret_<kind>").
SECRET_KINDS: tuple[SecretKind, ...] = get_args(SecretKind)


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text: its kind and the span of the secret value."""

    kind: SecretKind
    start: int
    end: int


# Tokens by their shape. Each starts where a token starts (the look-behind), so a long run is
# read once from its start, never again from every position inside it.
_TOKEN_PATTERNS = [
    re.compile(r"(?<![A-Za-z0-9_-])(?P<value>sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,})"),
    re.compile(r"(?<![A-Za-z0-9_])(?P<value>(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,}))"),
    re.compile(r"(?<![A-Za-z0-9])(?P<value>(?:AKIA|ASIA)[0-9A-Z]{16})(?![0-9A-Z])"),
    re.compile(r"(?<![A-Za-z0-9-])(?P<value>xox[abposr]-[A-Za-z0-9-]{10,})"),
    re.compile(r"(?<![A-Za-z0-9_-])(?P<value>AIza[0-9A-Za-z_-]{35})"),
    re.compile(r"(?<![A-Za-z0-9_-])(?P<value>glpat-[A-Za-z0-9_-]{20,})"),
    # Telegram bot tokens: "123456789:AA..." (35 characters after the colon).
    re.compile(r"(?<!\d)(?P<value>\d{8,10}:[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])"),
    # JSON Web Tokens.
    re.compile(
        r"(?<![A-Za-z0-9_-])(?P<value>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
    ),
]
# A password in a URL ("https://bob:hunter22@host", "postgres://app:pw@db"), as detect-secrets'
# basic-auth rule reads it. Neither part may hold what ends it, so each is read once.
_URL_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/@]{1,200}:(?P<value>[^\s/@]{1,200})@"
)
_KEY_NAME = r"-----(?:BEGIN|END) (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----"
_KEY_MARK = re.compile(_KEY_NAME)
_TW_ID = re.compile(r"(?<![A-Za-z0-9])(?P<value>[A-Za-z][1289]\d{8})(?!\d)")
_CN_ID = re.compile(r"(?<![\dA-Za-z])(?P<value>\d{17}[\dXx])(?![\dA-Za-z])")
_SSN = re.compile(r"(?<![\d-])(?P<value>\d{3}-\d{2}-\d{4})(?![\d-])")

_Check = Callable[[str], bool]
_RULES: list[tuple[SecretKind, re.Pattern[str], _Check | None]] = [
    *[("api_key", p, None) for p in _TOKEN_PATTERNS],
    ("password", _URL_PASSWORD, None),
    ("national_id", _TW_ID, taiwan_id_valid),
    ("national_id", _CN_ID, china_id_valid),
    ("national_id", _SSN, ssn_valid),
]


def _private_keys(text: str) -> list[Finding]:
    """PEM private key blocks: each BEGIN to the END after it, or to the end of the text."""
    found: list[Finding] = []
    begin = -1
    for m in _KEY_MARK.finditer(text):  # one pass: markers are paired, never re-searched
        if m[0].startswith("-----BEGIN"):
            if begin < 0:
                begin = m.start()
        elif begin >= 0:
            found.append(Finding("private_key", begin, m.end()))
            begin = -1
    if begin >= 0:
        found.append(Finding("private_key", begin, len(text)))
    return found


def scan(text: str) -> list[Finding]:
    """Every secret in ``text``, in order of position, overlapping findings merged."""
    found = _private_keys(text)
    for kind, pattern, check in _RULES:
        for m in pattern.finditer(text):
            start, end = m.span("value")
            if check is None or check(text[start:end]):
                found.append(Finding(kind, start, end))
    found += [Finding("card_number", a, b) for a, b in card_numbers(text)]
    found += [Finding("bank_account", a, b) for a, b in ibans(text)]
    # After the rules: "PIN 1234" is a PIN, "卡號 4111..." a card, before either is a password.
    found += [Finding(kind, a, b) for kind, a, b in phrase_secrets(text)]
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
_DIGIT_GAP = r"[\s.\-/]{0,3}"


def secrets_in(*texts: str) -> frozenset[str]:
    """The secret values found in ``texts`` (what a text derived from them must not repeat)."""
    return frozenset().union(*(_masked_memo(t)[1] for t in texts))


def _known_pattern(value: str) -> str:
    """``value`` as a pattern; digits match in any grouping ("1 2 3 4" is "1234" too)."""
    digits = [c for c in value if c.isdigit()]
    if len(digits) >= 4 and all(c.isdigit() or c in " .-/\u00a0\u3000" for c in value):
        return _DIGIT_GAP.join(digits)
    return re.escape(value)


def mask(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``.

    ``known`` are secrets found in the text this one was derived from (see
    :func:`secrets_in`): they are masked wherever they stand as a whole word, even with no
    "password" or "PIN" before them, as a model's summary or keyword list may put them, and
    digits in any grouping.
    """
    out = _masked_memo(text)[0]
    for value in sorted(set(known), key=len, reverse=True):
        if len(value) >= 3 and value != REDACTED:
            body = _known_pattern(value)
            out = re.sub(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", REDACTED, out)
    return out
