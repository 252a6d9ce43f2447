"""What of a reply may be shown while the model still writes it (docs/prompt.md, "Streaming").

The model's pieces arrive through the LLM seam's ``on_text``; the transport gets, through its
own sink, the reply as it may be shown so far (each call the whole shown text, growing), or
``""`` when a tool round began (show "typing", not the fragment). Nothing raw gets through:

* a tool call a small model writes as text (JSON, a fenced block, ``<tool_call>`` tags,
  ``memory_save(...)``) is held from its first sign (``{``, ``<``, a backtick, a tool's name)
  until the round is over; the final message then holds the reply with the call cut;
* what is shown is only ever what the final message shows: the text so far is masked
  (:func:`memory.base.guards.mask`, with the secrets said in this conversation, ``known``)
  and cut back before the first place where a secret may still start once more text comes
  (:func:`agent.stream_holds.settled`: a word not ended yet, a quote opened after a keyword,
  a URL's password, a code before its "from the bank", the start of a secret the person
  said), and the last ``HOLD_CHARS`` characters wait (unless a call's sign ended the text);
  shown text is never taken back: once masking would change it, nothing more is shown until
  the final message.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable

from agent.stream_holds import WORD_CHAR, settled
from memory.base.guards import mask

# Receives the reply as it may be shown so far ("" when a tool round began).
ReplySink = Callable[[str], Awaitable[None]]
HOLD_CHARS = 48
_CALL_SIGN = re.compile(r"[{<`]|\b(?:memory|reminder)_[a-z]")
# Where shown text may end: after a space, a sentence's or clause's mark, or a CJK character
# (those scripts put no spaces between words).
_BOUNDARY = re.compile(
    r"[\s，。！？；：、,.!?;:\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)
_RESCAN_CHARS = 8  # re-check the text after this many new characters ...
_RESCAN_SECONDS = 0.2  # ... and this long: a check reads the whole reply (masking), so a
# long reply written in small pieces must not be checked piece by piece (quadratic)


class StreamGuard:
    """Turns the model's pieces into what the user may see (``sink``); see the module doc."""

    def __init__(
        self,
        sink: ReplySink,
        known: frozenset[str] = frozenset(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sink = sink
        self.known = known
        self.clock = clock
        self._at = -_RESCAN_SECONDS  # when the text was last checked
        self.raw = ""  # this round's text as the model wrote it
        self.shown = ""  # what the sink was last given
        self.stopped = False  # masking changed shown text: nothing more until the end
        self._checked = 0

    async def piece(self, text: str) -> None:
        """One piece of the model's text (the LLM seam's ``on_text``)."""
        self.raw += text
        if self.stopped:
            return
        now = self.clock()
        if len(self.raw) - self._checked < _RESCAN_CHARS or now - self._at < _RESCAN_SECONDS:
            return
        self._checked, self._at = len(self.raw), now
        shown = self.showable(self.raw)
        if len(shown) <= len(self.shown):
            return
        if not shown.startswith(self.shown):
            self.stopped = True
            return
        self.shown = shown
        await self.sink(shown)

    def showable(self, raw: str) -> str:
        """The part of ``raw`` that may be shown now (masked, held back as the doc says)."""
        sign = _CALL_SIGN.search(raw)
        # The final message is the reply stripped: so is what is shown of it.
        text = (raw[: sign.start()] if sign else raw).lstrip()
        cut = settled(text, self.known)
        if not sign:  # the text before a call's sign is finished: no hold for its tail
            cut = min(cut, len(text) - HOLD_CHARS)
        whole = mask(text, self.known)
        # What the text masks to as it stands and what its settled part masks to: only the
        # start both agree on can be the start of the final message.
        agreed = _agreed(whole, mask(text[: max(0, cut)], self.known))
        end = 0
        for found in _BOUNDARY.finditer(whole, 0, agreed):
            # Never inside a word: "https://bob:" of "https://bob:hunter.2@host" is no end.
            inside = WORD_CHAR.match(whole, found.end()) and WORD_CHAR.match(whole, found.start())
            if not inside:
                end = found.end()
        return whole[:end].rstrip()

    async def tool_round(self) -> None:
        """The round ended in tool calls: drop its text; the user sees "typing" again."""
        had = bool(self.shown)
        self.raw, self.shown, self._checked, self.stopped = "", "", 0, False
        self._at = -_RESCAN_SECONDS
        if had:
            await self.sink("")


def _agreed(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` start with alike."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)
