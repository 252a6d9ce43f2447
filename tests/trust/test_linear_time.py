"""Every function that reads user text finishes on 100 KB of adversarial text (termination).

The strategies build text from runs, not ``st.text()``: the inputs that freeze a backtracking
pattern are long runs of one class (blanks of every kind, ``-``, ``:``, CJK punctuation), the
keywords a pattern keys on repeated, digits with separators. Each function must finish within
:data:`FINISH_SECONDS`; the bug class this guards against takes hours at 100 KB, so the limit
is a termination check, not a speed figure (bench/adversarial.py has the figures).
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.trust.textfuncs import SIZE, TEXT_FUNCTIONS, UNITS, runs

FINISH_SECONDS = 5.0


class _TooSlow(Exception):
    """The function was still running at the limit."""


def _stop(_sig: int, _frame: FrameType | None) -> None:
    raise _TooSlow


@contextmanager
def _within(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (the regex engine checks signals as it runs)."""
    old = signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def finishes(f: Callable[[str], object], text: str) -> bool:
    """Whether ``f(text)`` returns (or raises) within :data:`FINISH_SECONDS`."""
    try:
        with _within(FINISH_SECONDS):
            f(text)
    except _TooSlow:
        return False
    return True


_unit = st.one_of(
    st.sampled_from(UNITS),
    st.text(min_size=1, max_size=3),  # any other character class, emoji, combining marks
)
# (unit, weight): weight 0 is a single unit between runs ("1" + spaces + "分" + spaces + "x").
_part = st.tuples(_unit, st.integers(min_value=0, max_value=8))
adversarial = st.lists(_part, min_size=1, max_size=5).map(runs)


@pytest.mark.parametrize("name", list(TEXT_FUNCTIONS))
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=adversarial)
def test_finishes_on_100kb_of_runs(name: str, text: str) -> None:
    assert len(text) == SIZE
    assert finishes(TEXT_FUNCTIONS[name], text), f"{name} ran past {FINISH_SECONDS}s"


# The cases the issue measured, each against the function it froze.
KNOWN = [
    ("parse_reminder", "1" + " " * 100 + "分" + " " * 100 + "x"),  # 7-21 s, n^4
    ("parse_reminder", "1" + " " * 49_999 + "分" + " " * 50_000),
    ("parse_log", " " * 60_000),  # 9 s to read one logged line back
    ("parse_memory_heading", " " * 8_000),  # seconds on every read of the file
    ("parse_memory_heading", "\u3000" * 100_000 + "x"),
    ("emphasis", "重要 a" + "-" * 100_000 + "a"),  # runs of "-" / ":" at the edges
    ("emphasis", "a" + "，" * 100_000 + "a very important"),
    ("find_recurring_date", "生日 5月3日 " + "：" * 100_000 + "x"),
    ("find_recurring_date", "birthday 3 May" + "-" * 100_000 + "x"),
    ("todos_from", "待辦: a" + "；" * 100_000),
    ("parse_structured", "\u00a0" * 100_000 + "x"),
    ("structured_fields", "1" * 100_000),
    ("structured_fields", "，" * 100_000 + "x"),  # found by bench/adversarial.py
    ("structured_fields", "a: " * 33_000),
    ("extractive_dates_numbers_names", "1/" * 50_000 + "x"),  # found by the bench
    ("remember_request", "remember that x" + "!" * 100_000 + "a"),
    ("guards.mask", "pin" + "\u3000" * 100_000 + "x"),
    ("guards.mask", "密碼是x" * 25_000),
    ("guards.scan", "token" + " " * 100_000 + "x"),
    ("asks", "?" + " " * 100_000 + "x"),  # the reply lift's end-anchored pattern: quadratic
]


@pytest.mark.parametrize(
    ("name", "text"),
    [pytest.param(n, t, id=f"{n}-{i}") for i, (n, t) in enumerate(KNOWN)],
)
def test_the_measured_cases_finish(name: str, text: str) -> None:
    assert finishes(TEXT_FUNCTIONS[name], text), f"{name} ran past {FINISH_SECONDS}s"


def test_the_check_sees_a_function_that_never_finishes() -> None:
    catastrophic = re.compile(r"^(\s*)*x$")
    assert not finishes(lambda t: catastrophic.match(t), " " * 64)
    assert finishes(lambda t: t.split(), " " * SIZE)
