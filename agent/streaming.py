"""What of a reply may be shown while the model still writes it (docs/prompt.md, "Streaming").

The model's pieces arrive through the LLM seam's ``on_text``; the transport gets, through its
own sink, the reply as it may be shown so far (each call the whole shown text, growing), or
``""`` when a tool round began (show "typing", not the fragment). Nothing raw gets through:

* a tool call a small model writes as text (JSON, a fenced block, ``<tool_call>`` tags,
  ``memory_save(...)``) is held from its first sign (``{``, ``<``, a backtick, a tool's name)
  until the round is over; the final message then holds the reply with the call cut;
* a secret is masked (:func:`memory.base.guards.mask`, with the secrets of the user's
  message), and the last ``HOLD_CHARS`` characters wait (unless a call's sign ended the
  text), so a secret is whole before it can be shown; shown text is never taken back:
  once masking would change it, nothing more is shown until the final message.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable

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
        text = mask(raw[: sign.start()] if sign else raw, self.known)
        # The text before a call's sign is finished (the model went on to the call): no hold.
        limit = len(text) if sign else len(text) - HOLD_CHARS
        end = 0
        for found in _BOUNDARY.finditer(text, 0, max(0, limit) + 1):
            end = found.end()
        return text[:end].rstrip()

    async def tool_round(self) -> None:
        """The round ended in tool calls: drop its text; the user sees "typing" again."""
        had = bool(self.shown)
        self.raw, self.shown, self._checked, self.stopped = "", "", 0, False
        self._at = -_RESCAN_SECONDS
        if had:
            await self.sink("")
