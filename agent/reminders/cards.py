"""What the reminder desk hands a front end: cards (a text and its buttons) and presses.

Plain values, no Telegram: Telegram draws the buttons, the terminal prints each button's
command beside it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Button:
    """An inline button: its label, its callback data, and the command that does the same."""

    label: str
    data: str  # "rm:<code>:<arg>", at most 64 bytes
    command: str


@dataclass(frozen=True, slots=True)
class Card:
    """One message: its text, rows of buttons, and what a bare yes / no typed next answers."""

    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()
    answers: str = ""  # "r:<reminder id>" (a proposal), "b:<memory id>" (a birthday offer)
    hint: str = ""  # how to answer with the buttons; a front end without buttons says its own


@dataclass(frozen=True, slots=True)
class Pressed:
    """What a press did: a short toast, the pressed message's new text and buttons, more cards."""

    toast: str
    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()
    cards: tuple[Card, ...] = ()
