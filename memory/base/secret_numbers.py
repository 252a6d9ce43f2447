"""Numbers that are secrets by their checksum: cards in any grouping, IBANs, national ids.

A card number is found without a keyword when its 13-19 digits pass Luhn: written whole or
in any grouping of up to eight groups (``4111 1111 1111 1111``, ``4111.1111.1111.1111``,
``4111-1111-...``, Amex's 4-6-5), with one separator (or a short run of them,
``4111 - 1111``) between groups.
A run of grouped digits is read once from its start, each group starts windows of at most 19
digits, and prefix sums give each window's Luhn sum at once, so the search is linear in the
text; a date and a time, whose separators differ, are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate

_GROUP_SEP = r"[ .\-/_\u00a0\u2009\u202f\u3000\u2010-\u2015]"
# Groups of digits joined by at most three separator characters; digits and separators are
# disjoint classes, so each character is read once.
_RUN = re.compile(rf"(?<!\d)\d+(?:{_GROUP_SEP}{{1,3}}\d+)*")
_GROUPS = re.compile(rf"(\d+)({_GROUP_SEP}{{0,3}})")
_MAX_GROUPS = 8  # a card is written in at most this many groups
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")

# Taiwan: letter -> two-digit area code used by the check digit.
_TW_LETTERS = {c: n for c, n in zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True)}
_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_CHECK = "10X98765432"
# A digit doubled, its two digits added (Luhn): 5 -> 10 -> 1.
_DOUBLED = str.maketrans("0123456789", "0246813579")


def luhn_valid(digits: str) -> bool:
    """Luhn checksum: double every second digit from the right; the sum is divisible by 10."""
    if not digits.isdecimal():  # not isdigit: "²" is a digit int() cannot read
        return False
    if not digits.isascii():  # full-width digits
        digits = "".join(str(int(c)) for c in digits)
    backwards = digits[::-1]
    doubled = backwards[1::2].translate(_DOUBLED)
    return (sum(map(int, backwards[0::2])) + sum(map(int, doubled))) % 10 == 0


def taiwan_id_valid(value: str) -> bool:
    """Taiwan national id (A123456789): weights 1,9,8,...,1,1 over code+digits, sum % 10 == 0."""
    if len(value) != 10 or not value[1:].isdecimal():
        return False
    code = _TW_LETTERS.get(value[0].upper())
    if code is None:
        return False
    nums = [code // 10, code % 10, *(int(c) for c in value[1:])]
    weights = (1, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1)
    return sum(n * w for n, w in zip(nums, weights, strict=True)) % 10 == 0


def china_id_valid(value: str) -> bool:
    """China resident id (18 characters): ISO 7064 MOD 11-2 check digit and a plausible date."""
    if len(value) != 18 or not value[:17].isdecimal():
        return False
    year, month, day = int(value[6:10]), int(value[10:12]), int(value[12:14])
    if not (1900 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    total = sum(int(c) * w for c, w in zip(value[:17], _CN_WEIGHTS, strict=True))
    return _CN_CHECK[total % 11] == value[17].upper()


def ssn_valid(value: str) -> bool:
    """US SSN rules: area not 000/666/9xx, group not 00, serial not 0000."""
    digits = value.replace("-", "")
    if len(digits) != 9 or not digits.isdecimal():
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def iban_valid(value: str) -> bool:
    """IBAN: moved country and check digits to the end, letters as 10-35, the number % 97 == 1."""
    compact = value.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34 or not (compact.isascii() and compact.isalnum()):
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def card_ok(digits: str) -> bool:
    """13-19 digits, not all the same, passing Luhn."""
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits)


class _Run:
    """One run of grouped digits, with prefix sums that give any window's Luhn sum at once."""

    def __init__(self, text: str) -> None:
        found = [(m[1], m[2], m.start(1), m.end(1)) for m in _GROUPS.finditer(text)]
        self.groups = [(len(g), sep, a, b) for g, sep, a, b in found]
        digits = "".join(g for g, *_ in found)
        if not digits.isascii():  # full-width digits
            digits = "".join(str(int(c)) for c in digits)
        self.digits = digits
        self.at = [0, *accumulate(len(g) for g, *_ in found)]  # digit offset of each group
        plain = list(map(int, digits))
        doubled = list(map(int, digits.translate(_DOUBLED)))
        even, odd = plain[:], doubled[:]  # Luhn terms when the window ends at an odd / even
        even[1::2], odd[1::2] = doubled[1::2], plain[1::2]  # offset: doubled every other
        self.even, self.odd = [0, *accumulate(even)], [0, *accumulate(odd)]
        # The last group each one reaches with a single separator throughout.
        self.same_sep_to = list(range(len(found)))
        for k in range(len(found) - 2, -1, -1):
            same = found[k][1] == found[k + 1][1]
            self.same_sep_to[k] = self.same_sep_to[k + 1] if same else k + 1

    def card(self, a: int, b: int) -> bool:
        """Whether digits ``a:b`` (13-19 of them, not all alike) pass Luhn."""
        if not 13 <= b - a <= 19 or self.digits.count(self.digits[a], a, b) == b - a:
            return False
        sums = self.odd if b % 2 == 0 else self.even
        return (sums[b] - sums[a]) % 10 == 0

    def card_from(self, i: int) -> int:
        """The last group of the longest card that starts at group ``i``, or -1.

        Any grouping ("4111 1111 1111 1111", "3782 822463 10005", "4111 11111111 1111"),
        with one separator throughout: a date and a time ("2026.11.22 10.30") are not a
        card. At most 19 digits are read from ``i``, so a long run costs a constant per group.
        """
        at = self.at
        last = min(self.same_sep_to[i], i + _MAX_GROUPS - 1)
        if at[last + 1] - at[i] < 13:
            return -1  # too few digits within reach: most starts end here, at once
        best, j = -1, i
        while j <= last and at[j + 1] - at[i] <= 19:
            if at[j + 1] - at[i] >= 13 and self.card(at[i], at[j + 1]):
                best = j
            j += 1
        return best


def card_numbers(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the card numbers in ``text`` (Luhn-valid, whole or evenly grouped)."""
    for match in _RUN.finditer(text):
        run = _Run(match[0])
        i = 0
        while i < len(run.groups):
            last = run.card_from(i)
            if last < 0:
                i += 1
                continue
            yield match.start() + run.groups[i][2], match.start() + run.groups[last][3]
            i = last + 1


def ibans(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the IBANs in ``text`` that pass their mod-97 check."""
    for m in _IBAN.finditer(text):
        if iban_valid(m[0]):
            yield m.span()
