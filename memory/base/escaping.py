"""Escaping for the Markdown formats PCAI writes, so content can never pass for structure.

MEMORY.md and the daily logs are line-based: a line separator, or a line that looks like a
field or a record, inside user text would be read back as structure. :func:`escape` writes
every character that a reader could take as a line break (``\\n`` unless kept, ``\\r``,
``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029), every other control
character (NUL, DEL, C1) and a BOM as an HTML numeric reference (``&#x2028;``), which a
person can read and a Markdown viewer shows as the character. Whitespace at either end of a
value (and at the end of a line) is written the same way, so readers that strip a value,
and editors that strip trailing blanks, change nothing. ``&`` is written as ``&amp;`` only
where it would otherwise start such a reference, so ordinary text (``A & B``, ``&amp;``)
is written as it is, and a hand-written file reads as before.
"""

from __future__ import annotations

import functools
import re

# Everything str.splitlines() breaks on, the other C0/C1 controls but tab, and a BOM; then
# the same without \n, for text whose lines are written as lines.
_SPECIAL = r"\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ufeff"
_SPECIAL_BUT_NEWLINE = r"\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff"
# "&" is escaped only before what would read as a reference: "#x2028;", or "amp;" (any
# number of times) before one, so "&amp;#x41;" stays text while a plain "&amp;" is left alone.
_REF_AHEAD = r"(?=(?:amp;)*#x[0-9A-Fa-f]{1,6};)"
# A MEMORY.md text line that would read as a field, a heading or an escape gets a backslash.
_NEEDS_BACKSLASH = re.compile(r"^(?:- [a-z_]+:|#|\\[!-/:-@\[-`{-~])")
_BACKSLASHED = re.compile(r"^\\(?=[!-/:-@\[-`{-~])")
_CLOSING_HASHES = re.compile(r"\s#+$")


class _Refs(dict[int, str]):
    """``&#xHEX;`` for any code point, made on first use; ``&`` is ``&amp;``."""

    def __missing__(self, code: int) -> str:
        self[code] = ref = f"&#x{code:X};"
        return ref


_REFS = _Refs({ord("&"): "&amp;"})
# What a reference or an escaped "&" is made of. A character decoded into one of these could
# join the text around it into another reference, so only the exact pass decodes it.
_REF_ALPHABET = frozenset("&#;xamp0123456789ABCDEFabcdef")
_AMP = re.compile(rf"&{_REF_AHEAD}")
_BLANK = re.compile(r"\s")
_REF = re.compile(r"&#x[0-9A-Fa-f]{1,6};")
_REF_OR_AMP = re.compile(rf"(&amp;{_REF_AHEAD}|&#x[0-9A-Fa-f]{{1,6}};)")
# Kinds of character (or of reference) written with one str.replace each before the rest
# take one pass: a text holds one or two kinds, an adversary's up to seventy.
_FEW = 4


def _specials(multiline: bool, also: str) -> str:
    return (_SPECIAL_BUT_NEWLINE if multiline else _SPECIAL) + re.escape(also)


@functools.cache
def _pattern(multiline: bool, also: str) -> re.Pattern[str]:
    """Everything :func:`escape` rewrites: a text with no match is written as it is."""
    edges = r"\A\s|\s\Z" + (r"|[^\S\n](?=\n)" if multiline else "")
    return re.compile(rf"&{_REF_AHEAD}|{edges}|[{_specials(multiline, also)}]+")


@functools.cache
def _special(
    multiline: bool, also: str
) -> tuple[re.Pattern[str], dict[int, str], re.Pattern[str]]:
    """One special character, the table writing each as a reference, and a blank (not one of
    them) before a newline."""
    specials = _specials(multiline, also)
    special = re.compile(f"[{specials}]")
    chars = [*map(chr, range(0x100)), "\u2028", "\u2029", "\ufeff", *also]
    table = {ord(c): _REFS[ord(c)] for c in chars if special.match(c)}
    return special, table, re.compile(rf"[^\S\n{specials}](?=\n)")


def _ref(match: re.Match[str]) -> str:
    return match.group().translate(_REFS)


def escape(value: str, *, multiline: bool = False, also: str = "") -> str:
    """``value`` with no line separator, control character or blank end left as is.

    With ``multiline`` the ``\\n`` between lines stays (at either end it is escaped too), and
    each line's trailing blank is escaped. ``also`` names more characters to escape, such as
    a list's separator.
    """
    if _pattern(multiline, also).search(value) is None:
        return value
    if not _REF_ALPHABET.isdisjoint(also):  # its references would hold it: one match at a time
        return _pattern(multiline, also).sub(_ref, value)
    # Each rule decides a character by the text as given, and no reference one rule writes is
    # read by the next, so the rules run one after another as whole-string passes in C: one
    # str.replace per distinct character, not a Python call per match (100 KB of "\u2028 "
    # was 50,000 calls).
    if "&" in value:
        value = _AMP.sub("&amp;", value)
    special, table, blank = _special(multiline, also)
    if multiline and "\n" in value:
        found = blank.search(value)
        while found is not None:  # one round per kind of blank (18 kinds are not special)
            value = value.replace(found.group() + "\n", _REFS[ord(found.group())] + "\n")
            found = blank.search(value, found.start())
    found, kinds = special.search(value), 0
    while found is not None and kinds < _FEW:
        value = value.replace(found.group(), _REFS[ord(found.group())])
        found, kinds = special.search(value, found.start()), kinds + 1
    if found is not None:  # many kinds: one table pass over the whole text
        value = value.translate(table)
    if _BLANK.match(value):
        value = _REFS[ord(value[0])] + value[1:]
    if _BLANK.match(value, len(value) - 1):
        value = value[:-1] + _REFS[ord(value[-1])]
    return value


def _decode(ref: str) -> str:
    """The character ``&#xHEX;`` stands for, ``&`` for ``&amp;``, or ``ref`` itself when no
    writer makes it (a surrogate, past U+10FFFF): then it is left as the person typed it."""
    if ref == "&amp;":
        return "&"
    point = int(ref[3:-1], 16)
    return ref if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF else chr(point)


class _Decoded(dict[str, str]):
    """Each reference's character, decoded on first use."""

    def __missing__(self, ref: str) -> str:
        self[ref] = char = _decode(ref)
        return char


def unescape(value: str) -> str:
    """The inverse of :func:`escape`: ``unescape(escape(s, ...)) == s`` for every ``s``."""
    if "&" not in value:
        return value
    # A few distinct references, each everywhere at once: a reference is whole between its
    # "&" and the next, so decoding one into a character that cannot be part of any
    # reference leaves every other reading as it was.
    found, kinds = _REF.search(value), 0
    while found is not None and kinds < _FEW:
        char = _decode(found.group())
        if len(char) > 1 or char in _REF_ALPHABET:
            break
        value = value.replace(found.group(), char)
        found, kinds = _REF.search(value, found.start()), kinds + 1
    if "&" not in value:
        return value
    # The rest in one pass, the way the pattern reads them: a split in C, a dictionary lookup
    # per reference (a Python call per reference cost 1 us each).
    parts = _REF_OR_AMP.split(value)
    parts[1::2] = map(_Decoded().__getitem__, parts[1::2])
    return "".join(parts)


def split_lines(text: str) -> list[str]:
    """Lines as a file has them: only ``\\n``, ``\\r\\n`` and ``\\r`` end a line.

    Unlike :meth:`str.splitlines`, U+2028, ``\\x85``, form feed and the rest stay inside the
    line, where :func:`escape` keeps them from ever being written.
    """
    # str methods, not a split on r"\r\n|\r|\n": the same lines, no pattern match per break
    # (a file of 100,000 blank lines).
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def escape_text_lines(text: str) -> list[str]:
    """Entry text as lines to write: escaped, so no line reads as a field or a heading."""
    lines = escape(text, multiline=True).split("\n")
    return ["\\" + line if _NEEDS_BACKSLASH.match(line) else line for line in lines]


def unescape_text_line(line: str) -> str:
    """One written text line as it was before :func:`escape_text_lines` (escapes still in)."""
    return _BACKSLASHED.sub("", line, count=1)


def escape_heading(section: str) -> str:
    """A ``##`` heading line for ``section``; its text always reads back as written."""
    text = escape(section)
    if _CLOSING_HASHES.search(text):  # would read as a closing sequence and be dropped
        text = text[:-1] + "&#x23;"
    return f"## {text}"


def read_heading(line: str, closing: bool = True) -> str | None:
    """The text of a ``## `` heading line, or None: what ``^## +(.+?)(?:\\s+#+)?\\s*$`` reads,
    by walking in from the ends (that pattern backtracks over a heading of 8,000 blanks).

    With ``closing``, a closing run of #s is dropped, but only after a blank (CommonMark), so
    "## C#" is the section "C#".
    """
    if not line.startswith("## ") or len(line) == 3:
        return None
    body = line[3:].lstrip(" ")
    text = body.rstrip() or (body or line)[-1]
    if closing:
        bare = text.rstrip("#")
        if bare != text and bare[-1:].isspace() and bare.strip():
            text = bare.rstrip()
    return text
