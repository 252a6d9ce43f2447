"""Adversarial text against every function that reads user text: time as a ratio of plain text.

Usage::

    .venv/bin/python bench/adversarial.py [--size 100000] [--only NAME ...] [--cap 30]
        [--repeats 5]

Each function of :data:`tests.trust.textfuncs.TEXT_FUNCTIONS` (the ones the property tests in
tests/trust/test_linear_time.py attack) runs on ordinary mixed prose of ``--size`` characters
(the best of ``--repeats`` runs: the reference) and on each adversarial text of the same length
(runs of every whitespace and punctuation class, repeated keywords, digits with separators,
CJK, emoji, combining marks; :func:`tests.trust.textfuncs.adversarial_inputs`): once each,
then the three slowest again, best of ``--repeats``. A call still
running after ``--cap`` seconds is stopped and counted as taking ``--cap`` (the function's other
inputs are then skipped: it is over the bar whatever they take).

Prints one line per function (plain ms, worst adversarial ms and its input, the ratio), then
``adversarial: slowest <function> <ratio>x plain text``. The bar: every ratio at most 10x.
The reference is floored at one linear pass over the text (``str.split``), so a function that
returns at once on prose is not credited with a ratio nobody could meet.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.trust.textfuncs import TEXT_FUNCTIONS, adversarial_inputs, plain_text


class _Capped(Exception):
    """A call ran past the cap."""


def _alarm(_sig: int, _frame: FrameType | None) -> None:
    raise _Capped


def _time(f: Callable[[str], object], text: str, cap: float) -> float:
    """Seconds ``f(text)`` takes, at most ``cap``."""
    signal.setitimer(signal.ITIMER_REAL, cap)
    start = time.perf_counter()
    try:
        f(text)
    except _Capped:
        return cap
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - start


def _best(f: Callable[[str], object], text: str, cap: float, repeats: int) -> float:
    """The best of ``repeats`` timings (a capped run is not repeated)."""
    best = _time(f, text, cap)
    for _ in range(repeats - 1):
        if best >= cap:
            break
        best = min(best, _time(f, text, cap))
    return best


def main(argv: list[str] | None = None) -> int:
    """Run the bench; exit 1 when a ratio is over the bar."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--cap", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)
    inputs = adversarial_inputs(args.size)
    plain = plain_text(args.size)
    floor = _best(str.split, plain, args.cap, args.repeats)
    slowest = ("", 0.0)
    for name, f in TEXT_FUNCTIONS.items():
        if args.only and name not in args.only:
            continue
        ref = max(floor, _best(f, plain, args.cap, args.repeats))
        # One pass over every input finds the candidates; the slowest few are timed again, best
        # of --repeats like the reference (on a shared machine one run can be preempted 100x).
        first: dict[str, float] = {}
        for label, text in inputs.items():
            first[label] = _time(f, text, args.cap)
            if first[label] >= args.cap:  # over the bar for sure: the figure is the cap
                break
        top = sorted(first, key=first.__getitem__, reverse=True)[:3]
        worst, worst_input = max(
            (_best(f, inputs[label], args.cap, args.repeats), label) for label in top
        )
        ratio = worst / ref
        print(
            f"{name}: plain {ref * 1000:.2f} ms, worst {worst * 1000:.2f} ms "
            f"({worst_input}) = {ratio:.1f}x",
            flush=True,
        )
        if ratio > slowest[1]:
            slowest = (name, ratio)
    print(f"adversarial: slowest {slowest[0]} {slowest[1]:.1f}x plain text")
    return 0 if slowest[1] <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
