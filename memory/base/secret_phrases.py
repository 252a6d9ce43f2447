"""Secrets said as a phrase: keyword, separator, value, found in time linear in the text.

One linear-time pattern (RE2) finds every keyword of :mod:`memory.base.secret_words`; from
each, a bounded reader takes what follows: an identifier tail or closing quote ("db_password",
``"password": "x"``), a possessive ("the password's x"), a short qualifier ("for gmail", "für
Gmail"), up to four separator tokens ("is:", "=>", "was now", "是", ":=") and the value,
quoted ("'correct horse'") or bare, digits in any grouping ("1 2 3 4"). Every step reads a
bounded number of characters, so a keyword costs the same whatever follows it (100 KB of
spaces, or the next keyword): the scan is linear by construction, not by measurement.

Separated ("password: x", "密碼是x") the value is any word that is not plainly talk ("the
password is wrong"); bare ("password x", "密碼x") only a value that looks like one (it holds a
digit). PINs and codes are their digits, card numbers 12-19 digits after their keyword.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import re2  # type: ignore[import-untyped]  # google-re2 ships no type stubs

from memory.base.secret_words import (
    CODE_WORDS,
    FILLER_WORDS,
    KEYWORDS,
    LOGIN_WORDS,
    LOGIN_WORDS_WEAK,
    NAME_ONLY,
    NOT_A_VALUE,
    NOT_A_VALUE_ZH,
    NOT_ONE_TIME,
    ONE_TIME_CONTEXT,
    ONE_TIME_CONTEXT_ZH,
    QUALIFIERS,
    SEPARATOR_SYMBOLS,
    SEPARATOR_WORDS,
    SEPARATOR_WORDS_ZH,
    WEAK_KEYWORDS,
    SecretKind,
)

REDACTED = "[REDACTED]"
_GAP = r"[ _.\-]?"


_DROP = str.maketrans("", "", " \t\n_.-'’\u00a0\u3000")


def _norm(word: str) -> str:
    """A keyword as the lexicon keys it: lower case, without spaces, ``_ - . '``."""
    return word.lower().translate(_DROP)


def _alternative(word: str) -> str:
    parts = [re.escape(p).replace("'", "['’]?") for p in word.split(" ")]
    return _GAP.join(parts)


KIND_OF: dict[str, SecretKind] = {
    _norm(w): kind for kind, words in KEYWORDS.items() for w in words
}
_ALL = sorted({w for words in KEYWORDS.values() for w in words}, key=len, reverse=True)
# Longest first: at one position "clave api" is taken before "clave".
KEYWORD = re2.compile(("(?i)(?:" + "|".join(_alternative(w) for w in _ALL) + ")").encode())

_SPACE = re.compile(r"\s{0,6}")
_DIGIT = re.compile(r"\d")
_WORD_GOES_ON = re.compile(r"\S")
_ONLY_SEPARATORS = re.compile(rf"[\s{re.escape(SEPARATOR_SYMBOLS)}\"'“”「」]{{0,8}}")
# "hunter22 is my password", "1234 ist meine PIN", "hunter22是我的密碼": the value said first.
_BEFORE = re.compile(
    r"(?<![!-~])(?P<value>[!-~]{4,40}|\d{1,8}(?:[ .\-\u00a0]\d{1,8}){1,7})"  # or "1 2 3 4"
    r"(?:\s{1,3}(?:is|was|=|ist|war|est|était|es|era|è|é|are)"
    r"\s{1,3}(?:(?:my|the|our|your|his|her|their|mein|meine|mon|ma|mi|el|la|il|le|minha|meu|o|a"
    r"|mijn|het|de)\s{1,3})?(?:[^\s]{1,16}\s{1,2})?"
    r"|\s{0,2}(?:是|為|为|就是)\s{0,2}(?:我的|我們的|我们的|你的|他的|她的|的)?"
    r"\s{0,2}(?:[^\s]{1,8}\s{0,2})?)\Z",
    re.IGNORECASE,
)
_CLOSING_CHARS = "\"'])’”"
_CLOSER = re.compile(r"[\"'\]\)’”]{1,2}")
_TAIL = re.compile(r"[A-Za-z0-9_]{1,20}")
_SEPARATOR = re.compile(
    rf"\s{{0,6}}(?:(?P<symbol>[{re.escape(SEPARATOR_SYMBOLS)}]{{1,3}})"
    rf"|(?P<zh>{'|'.join(sorted(SEPARATOR_WORDS_ZH, key=len, reverse=True))})"
    r"|(?P<word>[^\W\d_]{1,12}(?:['’][^\W\d_]{1,3})?)(?!\w))"  # a whole word: not "be8+x"
)
_POSSESSIVE = re.compile(r"['’]s(?![A-Za-z])")
# "clave wifi", "contraseña del wifi", "Passwort vom WLAN": the network named after the keyword.
_NETWORK = re.compile(
    r"\s{1,2}(?:(?:del|de la|de|du|do|da|des|der|vom|van het|van|of the|of)\s{1,2})?"
    r"(?:wi[-\s]?fi|wlan|router|red|réseau|reseau|rete|rede|netwerk|netzwerk|network)"
    r"(?![A-Za-z])",
    re.IGNORECASE,
)
_NUMBER_WORD = re.compile(
    r"\s{0,2}(?:number|num|no\.?|nr\.?|nummer|numéro|numero|número|號碼|号码|號|号)(?![A-Za-z])",
    re.IGNORECASE,
)
_PAREN = re.compile(r"\s{0,2}\([^()\n]{1,40}\)")
_QUALIFIER_WORD = re.compile(r"\s{1,3}[^\s:：=＝,，。;；!?！？是]{1,30}")
# Opening quote -> its closer: the masker reads a quoted value to its closer (agent/stream_holds
# holds a draft back on the same pairs).
QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "「": "」", "『": "』", "`": "`"}
QUOTES |= {"„": "“", "‹": "›", "＂": "＂", "＇": "＇"}
_TOKEN = re.compile(r"[^\s\"“”«»「」『』，。,；;？！、]{1,128}")
_TOKEN_NOT_CJK = re.compile(
    r"[^\s\"“”«»「」『』，。,；;？！、\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]{1,128}"
)
_DIGIT_RUN = re.compile(r"\d(?:[ .\-/\u00a0\u3000]?\d){0,40}(?![A-Za-z\d])")
_DIGIT_GROUPS = re.compile(r"(?:[ \u00a0\u3000]\d{1,8}){1,16}(?![A-Za-z\d])")
_DATE_LIKE = re.compile(
    r"^\d{1,4}[-/.]\d{1,2}(?:[-/.]\d{1,4})?$|^\d{1,2}:\d{2}$"
    r"|^\d+(?:[.,]\d+)?(?:ghz|mhz|mbps|gbps|gb|mb|kb|ms|%)$"  # a measure: "wifi: 2.4GHz"
    r"|^\d{1,3}(?:\.\d{1,3}){3}$",  # an address: "the router is 192.168.1.1"
    re.IGNORECASE,
)
_TRAILING = ".,!?;:)]}>'\"’”。！？"
# After a verb, a word like these is talk: "is printed", "is expiring", "is easily guessed".
_PLAIN_WORD = re.compile(r"^[a-z]+(?:ed|ing|ly|able|ible|ful|less)$")
_NO_GROUPING = str.maketrans("", "", " .-/\u00a0\u3000")
# "alice / hunter22", "alice|hunter22": a login's name, then its password.
_PAIR_MARKS = "/|｜／"
_PAIR = re.compile(r"[ \t\u3000]{0,3}[/|｜／][ \t\u3000]{0,3}")
_ONE_TIME = re.compile(
    r"(?<![^\W_])(?:"
    + "|".join(re.escape(w) for w in sorted(ONE_TIME_CONTEXT, key=len, reverse=True))
    + r")(?![^\W_])|"
    + "|".join(ONE_TIME_CONTEXT_ZH),
    re.IGNORECASE,
)
_WORD_BEFORE = re.compile(r"([^\W\d_]{1,12})[\s\-]{1,2}\Z")
_NAMED_LOGINS = LOGIN_WORDS | LOGIN_WORDS_WEAK
_CONTEXT_CHARS = 80  # how far from a code its "from the bank" may be: about a sentence
_NUMERIC_KINDS = frozenset(
    {"pin_code", "card_security_code", "card_number", "national_id", "bank_account"}
)
_SSN_WORDS = frozenset({"ssn", "socialsecuritynumber", "socialsecurityno", "socialsecurity"})


def _is_cjk(ch: str) -> bool:
    """Whether ``ch`` (one character, or none at the end of a text) is Chinese or Japanese."""
    return "\u3040" <= ch <= "\ud7af" or "\uf900" <= ch <= "\ufaff"


def _skip_space(text: str, pos: int) -> int:
    """``pos`` past at most six spaces: a keyword's value is near it or not there."""
    m = _SPACE.match(text, pos)
    return m.end() if m else pos


def _separators(text: str, pos: int) -> tuple[int, int]:
    """Where the separator tokens after ``pos`` end, and how plainly they say a value follows.

    3: a symbol (":", "=>", "是"); 2: a verb ("is", "lautet"); 1: fillers only ("now"); 0: none.
    """
    strength = 0
    for _ in range(4):
        m = _SEPARATOR.match(text, pos)
        if m is None:
            break
        if m.lastgroup != "word":
            pos, strength = m.end(), 3
            continue
        if m.start("word") == pos and pos > 0 and text[pos - 1].isalnum():
            break  # a word glued to the one before is no separator
        lower = m["word"].lower()
        if lower in SEPARATOR_WORDS:
            pos, strength = m.end(), max(strength, 2)
        elif lower in FILLER_WORDS:
            pos, strength = m.end(), max(strength, 1)
        else:
            break
    return pos, strength


def _qualified(text: str, pos: int, clause: bool = False) -> tuple[int, int]:
    """Separators after a short qualifier ("for gmail", "(work)"); (pos, 0) when there is none.

    With ``clause``, any five words are one ("the code they texted me: 483920").
    """
    if m := _PAREN.match(text, pos):
        end, strength = _separators(text, m.end())
        if strength >= 2:
            return end, strength
    first = _QUALIFIER_WORD.match(text, pos)
    if first is None or not (clause or first[0].strip().lower() in QUALIFIERS):
        return pos, 0
    at = first.end()
    if clause and (found := _separators(text, at))[1] >= 2:
        return found
    for _ in range(4):
        word = _QUALIFIER_WORD.match(text, at)
        if word is None:
            break
        at = word.end()
        end, strength = _separators(text, at)
        if strength >= 2:
            return end, strength
    return pos, 0


def _value_span(text: str, at: int) -> tuple[int, int, bool]:
    """The value starting at ``at``: (start, end, quoted)."""
    close = QUOTES.get(text[at : at + 1])
    if close is not None:
        end = text.find(close, at + 1, at + 130)
        if end > at + 1:
            return at + 1, end, True
        at += 1  # a quote that does not close (yet: the text may be cut here)
    if at >= len(text):
        return at, at, False
    if text[at : at + 1].isdigit() and (m := _DIGIT_RUN.match(text, at)):
        return at, m.end(), False
    # "密碼改成abc12345了": a value that does not start in Chinese ends where Chinese resumes.
    m = (_TOKEN if _is_cjk(text[at : at + 1]) else _TOKEN_NOT_CJK).match(text, at)
    if m is None:
        return at, at, False
    end = m.end()
    while end > at and text[end - 1] in _TRAILING:
        end -= 1
    if text[at:end].isdigit() and (more := _DIGIT_GROUPS.match(text, end)):
        end = more.end()  # "1234 5678"
    return at, end, False


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def is_keyword(value: str) -> bool:
    """Whether ``value`` is itself a keyword ("密碼是 password: x": the value comes after it)."""
    return _norm(value) in KIND_OF


def _talk(value: str) -> bool:
    """Whether a separated value is ordinary talk about the secret, not the secret."""
    lower = value.lower()
    return (
        len(value) < 3
        or lower in NOT_A_VALUE
        or lower.rstrip(_TRAILING) in NOT_A_VALUE
        or value.startswith(NOT_A_VALUE_ZH)
        or value.startswith(REDACTED)
        or is_keyword(value)
    )


def _looks_like_password(value: str) -> bool:
    """A value with no separator before it: it must look like one (ASCII, with a digit)."""
    return (
        len(value) >= 4
        and value.isascii()
        and any(c.isdigit() for c in value)
        and not _DATE_LIKE.match(value)
        and not _talk(value)
    )


def _numeric(kind: SecretKind, word: str, value: str) -> SecretKind | None:
    """The kind of a PIN, code, card, id or account number ``value`` after its keyword."""
    digits = _digits(value)
    grouped = value.translate(_NO_GROUPING)  # the digits and whatever is not a separator
    numeric = len(digits) * 2 >= len(grouped)
    if kind == "pin_code" and 4 <= len(digits) <= 8:
        return "pin_code" if len(digits) == len(grouped) else None
    if kind == "card_security_code" and 3 <= len(digits) <= 4 and len(value) <= 7:
        return "card_security_code"
    if kind == "card_number":
        return "card_number" if numeric and 12 <= len(digits) <= 19 else None
    if kind == "national_id":
        if word in _SSN_WORDS:
            return "national_id" if len(digits) == 9 and numeric else None
        return "national_id" if len(digits) >= 6 and len(value) <= 24 else None
    if kind == "bank_account":
        return "bank_account" if len(digits) >= 6 and len(value) <= 40 else None
    return None


def _judge(
    kind: SecretKind, word: str, value: str, strength: int, quoted: bool
) -> SecretKind | None:
    """The kind of secret ``value`` is after keyword ``word``, or None when it is none.

    A PIN or code keyword followed by a word, not digits, says a password ("PIN: abcd").
    """
    if len(value) < 3:
        return None
    if kind in _NUMERIC_KINDS:
        found = _numeric(kind, word, value)
        if found is not None or kind not in ("pin_code", "card_security_code"):
            return found
        # "PIN: ab12cd" is one; "the PIN is printed on the letter" is talk.
        return "password" if _looks_like_password(value) else None
    if kind == "api_key":
        has_digit = any(c.isdigit() for c in value)
        random = has_digit and any(c.isalpha() for c in value)
        if len(value) >= 8 and (random or len(value) >= 24) and not _talk(value):
            return "api_key"
        if not has_digit:
            return None  # "the secret is out": a key word and an ordinary word
    if word in WEAK_KEYWORDS:  # "wifi: hunter22", not "the wifi is down"
        strong = strength >= 2 or quoted
        return "password" if strong and _looks_like_password(value) else None
    if strength == 2 and not quoted and _PLAIN_WORD.match(value):
        return None  # "the password is printed on the router": a verb, then a plain word
    if strength >= 2 or quoted:
        return "password" if not _talk(value) else None
    return "password" if _looks_like_password(value) else None


def _second_of_pair(text: str, vstart: int, vend: int) -> tuple[int, int] | None:
    """Where the password of "name / password" is, the name at ``text[vstart:vend]``."""
    value = text[vstart:vend]
    if "://" not in value:  # "alice/hunter22" is read as one value (a URL is not a pair)
        cut = next((i for i, c in enumerate(value) if c in _PAIR_MARKS), -1)
        if 0 < cut < len(value) - 1:
            return vstart + cut + 1, vend
    m = _PAIR.match(text, vend)
    if m is None:
        return None
    start, end, _ = _value_span(text, m.end())
    return (start, end) if end > start else None


def _pair_password(word: str, value: str, strength: int) -> bool:
    """Whether ``value``, after "login: alice /", is the password: any word that is not talk
    after a plain login word and a separator; otherwise one that looks like a password."""
    if len(value) < 4 or _talk(value) or _DATE_LIKE.match(value):
        return False
    if word in LOGIN_WORDS and strength >= 2 and not value.startswith(tuple(_PAIR_MARKS)):
        return True
    return _looks_like_password(value)


def _one_time(text: str, start: int, end: int) -> bool:
    """Whether the code at ``text[start:end]`` (its keyword at ``start``) is a one-time code:
    a bank or a message sent it, said within a sentence of it; "zip code" never is."""
    before = _WORD_BEFORE.search(text, max(0, start - 16), start)
    if before is not None and before[1].lower() in NOT_ONE_TIME:
        return False
    lo, hi = max(0, start - _CONTEXT_CHARS), min(len(text), end + _CONTEXT_CHARS)
    return _ONE_TIME.search(text, lo, hi) is not None


def _said_before(text: str, start: int) -> tuple[SecretKind, int, int] | None:
    """A password-like value said before its keyword ("hunter22 is my password"), if any."""
    lo = max(0, start - 72)
    if not _DIGIT.search(text, lo, start):
        return None  # the value holds a digit: no digit before, nothing to look for
    m = _BEFORE.search(text, lo, start)
    if m is None:
        return None
    value = m["value"].rstrip(_TRAILING)
    digits = value.translate(_NO_GROUPING)  # "1 2 3 4 is my PIN": digits in any grouping
    grouped = digits.isdecimal() and len(digits) >= 4 and not _DATE_LIKE.match(value)
    if not (grouped or _looks_like_password(value)):
        return None
    return "password", m.start("value"), m.start("value") + len(value)


def _phrase(
    text: str, start: int, end: int, word: str, kind: SecretKind
) -> tuple[SecretKind, int, int] | None:
    """The secret after keyword ``word`` (of ``kind``) at ``text[start:end]``, if one follows."""
    latin = not _is_cjk(text[start : start + 1])
    pos, glued = end, False
    if latin:
        # "spin" is "pin" inside a word; "我的pin" is not (Chinese runs into English unspaced).
        before = text[start - 1 : start]
        glued = before.isalpha() and not _is_cjk(before)
        # A CJK letter right after a Latin keyword is no identifier: "login是alice" reads on.
        if tail := _TAIL.match(text, pos):
            pos, glued = tail.end(), True
        if glued and len(word) <= 4:
            return None  # "spin", "ping", "mdpx": a short keyword inside a word
    following = text[pos : pos + 1]  # what may follow is told by its first character: cheap
    if following.isspace() or following in "號号":
        if network := _NETWORK.match(text, pos):
            pos = network.end()
        elif number := _NUMBER_WORD.match(text, pos):
            pos = number.end()  # "bank account number", "credit card no."
        following = text[pos : pos + 1]
    strength = 0
    if following and following in _CLOSING_CHARS:
        if possessive := _POSSESSIVE.match(text, pos):
            pos, strength = possessive.end(), 2  # "the password's x"
        elif closer := _CLOSER.match(text, pos):
            pos = closer.end()  # "password": "x" and ['password'] = 'x'
    pos, found = _separators(text, pos)
    strength = max(strength, found)
    if strength < 2:
        after, qualified = _qualified(text, pos, clause=word in CODE_WORDS)
        if qualified:
            pos, strength = after, qualified
    if glued and strength < 2:
        return None
    at = _skip_space(text, pos)
    if at >= len(text) or (latin and strength == 0 and at == pos):
        return None  # "passwordless": no value, or the keyword runs into it
    vstart, vend, quoted = _value_span(text, at)
    value = text[vstart:vend]
    if len(value) < 3 and word not in _NAMED_LOGINS:
        return None  # too short for a secret ("密碼是x密碼是x": each value is "x")
    if text.startswith(REDACTED, vstart) or text.startswith(REDACTED, at):
        return None  # masked already: masking twice changes nothing
    if word in _NAMED_LOGINS:
        pair = _second_of_pair(text, vstart, vend)
        if pair is not None and _pair_password(word, text[pair[0] : pair[1]], strength):
            return "password", pair[0], pair[1]
        if word in NAME_ONLY:
            return None  # a user name is no secret
    found_kind = _judge(kind, word, value, strength, quoted)
    if word in CODE_WORDS and (found_kind != "pin_code" or not _one_time(text, start, vend)):
        return None  # "zip code 10001", not "code 483920 from the bank"
    return (found_kind, vstart, vend) if found_kind else None


def phrase_secrets(text: str) -> Iterator[tuple[SecretKind, int, int]]:
    """Every secret said with a keyword in ``text``: (kind, start, end) of its value."""
    spans = keyword_spans(text)
    here = next(spans, None)
    while here is not None:
        after = next(spans, None)
        start, end = here
        # A keyword right before the next one ("pin pin", "密碼：密碼 x") has that one as its
        # value, never a secret: skipping it keeps runs of keywords cheap.
        value_is_keyword = (
            after is not None
            and after[0] - end <= 8
            and _ONLY_SEPARATORS.fullmatch(text, end, after[0]) is not None
            # ...a whole word: in "password password123" or "pw: pW+000" it starts the value
            and not _WORD_GOES_ON.match(text, after[1])
        )
        word = _norm(text[start:end])
        kind = KIND_OF.get(word)
        if kind is None:
            here = after
            continue
        if not value_is_keyword and (found := _phrase(text, start, end, word, kind)):
            yield found
        if kind in ("password", "pin_code") and word not in NAME_ONLY:
            before = _said_before(text, start)  # "hunter22 is my password"
            if before and (word not in CODE_WORDS or _one_time(text, start, end)):
                yield before
        here = after


def keyword_spans(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the keywords in ``text``, by one linear-time pass of RE2 over its bytes.

    RE2 reads UTF-8: byte offsets become character offsets by counting the characters
    between one hit and the next, so the whole conversion is one pass too.
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) == len(text):  # ASCII: the offsets are the same
        yield from (m.span() for m in KEYWORD.finditer(data))
        return
    byte, char = 0, 0
    for m in KEYWORD.finditer(data):
        a, b = m.span()
        char += len(data[byte:a].decode("utf-8", "surrogatepass"))
        start = char
        char += len(data[a:b].decode("utf-8", "surrogatepass"))
        byte = b
        yield start, char
