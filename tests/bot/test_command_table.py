"""Every command in the menu (``COMMANDS``) has its ``Desk.cmd_*`` method, and no method hides.

``Desk.command`` answers an unknown name with the help text, so a command added to the menu
without its method would silently show /help instead of failing.
"""

from __future__ import annotations

import inspect

from agent.reminders.desk import REMINDER_COMMANDS
from bot.frontdesk.desk import Desk
from bot.frontdesk.texts import COMMANDS

MENU = [name for name, _, _ in COMMANDS]
# The reminder commands go to the ReminderDesk (bot/telegram/reminders.py routes them there).
DESK_MENU = [name for name in MENU if name not in REMINDER_COMMANDS]


def test_every_command_in_the_menu_has_its_method() -> None:
    missing = [name for name in DESK_MENU if not hasattr(Desk, f"cmd_{name}")]
    assert missing == []
    assert set(REMINDER_COMMANDS) <= set(MENU)
    not_async = [
        n for n in DESK_MENU if not inspect.iscoroutinefunction(getattr(Desk, f"cmd_{n}"))
    ]
    assert not_async == []


def test_every_method_is_in_the_menu() -> None:
    # Telegram routes only the menu's names to the Desk: a method outside it is unreachable.
    methods = [name.removeprefix("cmd_") for name in dir(Desk) if name.startswith("cmd_")]
    assert sorted(methods) == sorted(DESK_MENU)
    assert len(MENU) == len(set(MENU))
