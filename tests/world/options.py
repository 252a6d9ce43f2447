"""How big a run of the world machine is (read once, at import: the tests' own fixtures clear
every ``PCAI_`` variable before a test runs).

- ``PCAI_WORLD_EXAMPLES=N``: the bigger run, N examples of ``PCAI_WORLD_STEPS`` (40) steps;
  without it ``make test`` runs :data:`QUICK_EXAMPLES` of :data:`QUICK_STEPS`.
- ``PCAI_WORLD_OFF=undo,halfsecret``: rules (by name) or text kinds left out, to look past a
  known failure while iterating. Unset, every rule runs.
"""

from __future__ import annotations

import os

QUICK_EXAMPLES = 12
QUICK_STEPS = 30

EXAMPLES = int(os.environ.get("PCAI_WORLD_EXAMPLES") or 0)
STEPS = int(os.environ.get("PCAI_WORLD_STEPS") or 40)
OFF = frozenset(filter(None, os.environ.get("PCAI_WORLD_OFF", "").split(",")))


def examples() -> int:
    """How many sequences of acts to try."""
    return EXAMPLES or QUICK_EXAMPLES


def steps() -> int:
    """How many acts in each."""
    return STEPS if EXAMPLES else QUICK_STEPS
