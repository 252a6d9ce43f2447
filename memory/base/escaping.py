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
_UNESCAPE = re.compile(rf"&amp;{_REF_AHEAD}|&#x([0-9A-Fa-f]{{1,6}});")
# A MEMORY.md text line that would read as a field, a heading or an escape gets a backslash.
_NEEDS_BACKSLASH = re.compile(r"^(?:- [a-z_]+:|#|\\[!-/:-@\[-`{-~])")
_BACKSLASHED = re.compile(r"^\\(?=[!-/:-@\[-`{-~])")
_CLOSING_HASHES = re.compile(r"\s#+$")


@functools.cache
def _pattern(multiline: bool, also: str) -> re.Pattern[str]:
    special = (_SPECIAL_BUT_NEWLINE if multiline else _SPECIAL) + re.escape(also)
    edges = r"\A\s|\s\Z" + (r"|[^\S\n](?=\n)" if multiline else "")
    # A run of special characters is one match, written by str.translate: one Python call
    # per run, not per character (100 KB of U+2028 was 100,000 calls).
    return re.compile(rf"&{_REF_AHEAD}|{edges}|[{special}]+")


class _Refs(dict[int, str]):
    """``&#xHEX;`` for any code point, made on first use; ``&`` is ``&amp;``."""

    def __missing__(self, code: int) -> str:
        self[code] = ref = f"&#x{code:X};"
        return ref


_REFS = _Refs({ord("&"): "&amp;"})


def _ref(match: re.Match[str]) -> str:
    return match.group().translate(_REFS)


def escape(value: str, *, multiline: bool = False, also: str = "") -> str:
    """``value`` with no line separator, control character or blank end left as is.

    With ``multiline`` the ``\\n`` between lines stays (at either end it is escaped too), and
    each line's trailing blank is escaped. ``also`` names more characters to escape, such as
    a list's separator.
    """
    return _pattern(multiline, also).sub(_ref, value)


def _char(match: re.Match[str]) -> str:
    code = match.group(1)
    if code is None:
        return "&"
    point = int(code, 16)
    # A reference no writer makes (a surrogate, past U+10FFFF) is left as the person typed it.
    if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:
        return match.group()
    return chr(point)


def unescape(value: str) -> str:
    """The inverse of :func:`escape`: ``unescape(escape(s, ...)) == s`` for every ``s``."""
    return _UNESCAPE.sub(_char, value) if "&" in value else value


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
