"""Replies that hold secrets, for the streaming properties (what a draft may show).

Each drawn :class:`SecretReply` is what the person said (their secrets: the guard's
``known``), the model's reply, and the marks of every secret in it: words and numbers that
occur nowhere else, so a mark seen in a draft is that secret, leaked. The kinds are the
ones issue 28 found shown before masking, and more of each: a quoted pass-phrase longer
than the 48-character hold-back in any quote style the masker knows, a pass-phrase the
person said echoed without its keyword, a URL password with dots, ``密碼是「...」``, a
one-time code whose "from the bank" comes later, a password said before its keyword.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hypothesis import strategies as st

from agent.streaming import StreamGuard
from memory.base.guards import mask, secrets_in

# Made-up words: none is in the filler, so each seen in a draft comes from a secret.
SECRET_WORDS = (
    "vorpal", "gimble", "borogove", "mimsy", "frabjous", "tulgey", "uffish", "jubjub",
    "manxome", "slithy", "wabe", "bandersnatch", "outgrabe", "callooh", "tumtum", "beamish",
)  # fmt: skip
QUOTES = (
    ('"', '"'),
    ("'", "'"),
    ("“", "”"),
    ("«", "»"),
    ("「", "」"),
    ("『", "』"),
    ("`", "`"),
    ("„", "“"),
)
KEYWORDS = ("Your Wi-Fi password is", "the passphrase:", "your password =", "密碼是", "PIN is")
FILLER = (
    "Sure, I can help with that.",
    "The router sits in the hall cupboard, next to the fuse box.",
    "I will not keep that in your memories, since secrets are never stored.",
    "好的，我知道了。",
    "路由器放在走廊的櫃子裡，保險絲盒旁邊。",
    "If you change it, tell me and I will propose the new place for you to confirm.",
    "Let me know if anything else comes up today.",
)


@dataclass(frozen=True)
class SecretReply:
    """What the person said, what the model answers, and the marks of its secrets."""

    said: str
    reply: str
    marks: tuple[str, ...]

    @property
    def known(self) -> frozenset[str]:
        """The secrets the person said, as the turn hands them to the guard."""
        return secrets_in(self.said)

    @property
    def final(self) -> str:
        """The final message, masked as the turn masks it."""
        return mask(self.reply.strip(), self.known)


@st.composite
def phrases(draw: st.DrawFn, least: int = 3) -> list[str]:
    """A pass-phrase of made-up words, long enough to outlast the hold-back."""
    return draw(st.lists(st.sampled_from(SECRET_WORDS), min_size=least, max_size=9, unique=True))


@st.composite
def quoted(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A keyword, then a quoted pass-phrase (any of the masker's quote styles)."""
    words = draw(phrases(5))
    opening, closing = draw(st.sampled_from(QUOTES))
    keyword = draw(st.sampled_from(KEYWORDS[:4]))
    space = "" if keyword.endswith("是") else " "
    return f"{keyword}{space}{opening}{' '.join(words)}{closing}.", words


@st.composite
def url(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A URL whose password has dots (and may be long)."""
    words = draw(phrases(2))
    host = draw(st.sampled_from(("db.example.org", "192.168.1.20:5432", "nas.local")))
    return f"Connect with https://bob:{'.'.join(words)}@{host}/main and restart.", words


@st.composite
def code(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A one-time code, its "from the bank" a little later."""
    digits = str(draw(st.integers(100000, 999999)))
    return f"Your code is {digits}. It was sent by text from the bank this morning.", [digits]


@st.composite
def said_before(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A password said before its keyword."""
    value = draw(st.sampled_from(SECRET_WORDS)) + str(draw(st.integers(10, 99)))
    return f"So {value} is your Wi-Fi password.", [value]


@st.composite
def secret_replies(draw: st.DrawFn) -> SecretReply:
    """A reply of filler and secrets; the person said one pass-phrase, which it may echo."""
    said_words = draw(phrases(5))
    opening, closing = draw(st.sampled_from(QUOTES[:6]))
    chinese = draw(st.booleans())
    phrase = " ".join(said_words)
    said = (
        f"我的 WiFi 密碼是{opening}{phrase}{closing}"
        if chinese
        else f"my wifi password is {opening}{phrase}{closing}"
    )
    echo = st.just((f"Noted. {phrase}, got it.", said_words))
    secret = st.one_of(quoted(), url(), code(), said_before(), echo)
    parts: list[str] = []
    marks: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        parts += draw(st.lists(st.sampled_from(FILLER), max_size=2))
        text, words = draw(secret)
        parts.append(text)
        marks += words
    parts += draw(st.lists(st.sampled_from(FILLER), max_size=2))
    return SecretReply(said, " ".join(parts), tuple(marks))


def pieces(text: str, sizes: list[int]) -> list[str]:
    """``text`` cut into pieces of the ``sizes`` given, round and round."""
    out, at, i = [], 0, 0
    while at < len(text):
        size = sizes[i % len(sizes)]
        out.append(text[at : at + size])
        at, i = at + size, i + 1
    return out


class Ticks:
    """A clock that moves a second each time it is read: every piece may be checked."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


async def stream(
    case: SecretReply, sizes: list[int], sink: Callable[[str], Awaitable[None]]
) -> None:
    """The model writes ``case.reply`` in pieces; the guard hands ``sink`` what may be shown."""
    guard = StreamGuard(sink, case.known, clock=Ticks())
    for piece in pieces(case.reply, sizes):
        await guard.piece(piece)
        await asyncio.sleep(0)


def leaks(case: SecretReply, shown: str) -> list[str]:
    """The marks of secrets the final message masks that ``shown`` holds."""
    final = case.final
    return [m for m in case.marks if m not in final and m in shown]


chunk_sizes = st.lists(st.integers(1, 13), min_size=1, max_size=8)
