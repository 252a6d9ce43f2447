"""Number ids a person types or a button carries: only ASCII digits are one.

``str.isdigit`` says yes to "²" and "١٢" and ``int`` reads "١٢" as 12, so a check with one
and a read with the other either raises or answers a reminder the person never named. Here a
number id is 1 to :data:`MAX_DIGITS` ASCII digits, with an optional leading ``#``; anything
else is not an id, and the caller says so in one sentence.
"""

from __future__ import annotations

MAX_DIGITS = 19  # SQLite's largest integer has 19 digits: no row has a longer id


def number_id(raw: str) -> int | None:
    """``raw`` as a number id ("12", "#12"), or None ("²", "١٢", "+1", "1.0", 20 digits)."""
    digits = raw.removeprefix("#")
    if not 0 < len(digits) <= MAX_DIGITS or not (digits.isascii() and digits.isdigit()):
        return None
    return int(digits)
