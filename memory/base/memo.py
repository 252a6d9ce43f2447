"""A memo for pure functions of (possibly long) strings, bounded by characters held."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class TextMemo(Generic[T]):
    """``func(text)`` remembered by text; least recently used out past ``budget`` characters.

    A text longer than an eighth of the budget is computed every time, so one huge text never
    empties the memo. Safe to call from several threads.
    """

    def __init__(self, func: Callable[[str], T], budget: int) -> None:
        self.func = func
        self.budget = budget
        self.used = 0
        self._items: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> T:
        """``func(text)``, from the memo when it was computed before."""
        with self._lock:
            if text in self._items:
                self._items.move_to_end(text)
                return self._items[text]
        value = self.func(text)
        if len(text) <= self.budget // 8:
            with self._lock:
                if text not in self._items:
                    self._items[text] = value
                    self.used += len(text)
                    while self.used > self.budget:
                        old, _ = self._items.popitem(last=False)
                        self.used -= len(old)
        return value
