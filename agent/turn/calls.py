"""A turn's side effects happen once: the tool calls a turn ran, and what they gave back.

A turn may ask the model more than once: the prompt cut to fit after the server refused it
(HTTP 400 "exceeds the context"), or asked again after a timeout or a broken stream. The model
then often asks for the same call again. Each call is keyed by the tool's name and its
arguments in one canonical form (the turn is the owner of the record); a call that comes again
in the same turn gets the result recorded the first time, and its handler does not run again.
This holds for every tool, the read-only ones too.

The record lives as long as the turn. The same message answered again (a replay after a
crash or a stop) proposes nothing twice either: the proposals carry their message's id
(:mod:`agent.turn.tools`), so nothing of the user's is kept here beyond the turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def canonical(name: str, arguments: Mapping[str, Any]) -> str:
    """``name(arguments)`` in one form: keys sorted, spaces in strings folded, empty optional
    values dropped (a model asked again may say ``"Call mom "`` for ``"Call mom"``)."""
    return json.dumps(
        {"tool": name, "arguments": _canon(dict(arguments))},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )


def _canon(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, Mapping):
        kept = {str(k): _canon(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", [], {})}
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class DoneCall:
    """One call that ran: what it returned, or what it raised."""

    result: Mapping[str, Any] | None
    error: BaseException | None = None


class TurnCalls:
    """The calls one turn ran, by canonical key: each runs once per turn."""

    def __init__(self) -> None:
        self._done: dict[str, DoneCall] = {}
        self.reused = 0  # calls answered from the record (for the log and tests)

    def get(self, key: str) -> DoneCall | None:
        """The call recorded under ``key``, if it ran in this turn."""
        done = self._done.get(key)
        self.reused += done is not None
        return done

    def put(self, key: str, done: DoneCall) -> None:
        """Record a call that ran (the first record stays: a call runs once)."""
        self._done.setdefault(key, done)

    def __len__(self) -> int:
        return len(self._done)
