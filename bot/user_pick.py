"""Which user a ``pcai`` command acts as: ``--user``, else ``PCAI_USER``, else the only one."""

from __future__ import annotations

from pathlib import Path

from memory.base.users import check_user_key, list_user_keys
from memory.errors import InvalidUserKeyError

# What each command's --help says of the rule (bot/cli_parser.py).
RULE = "default: $PCAI_USER, else the only user in the data folder (several: an error lists them)"
TERMINAL = "cli_"
GROUP = "telegram_group_"  # a group's conversation is no one person's data


class UserNotChosenError(Exception):
    """No user was named, and the data folder does not make one the only choice."""


def user_key_of(value: str) -> str:
    """``--user``'s one meaning in every command: a user key (``cli_alice``,
    ``telegram_42``); a bare name (``alice``) is short for ``cli_alice``."""
    key = value if "_" in value else f"cli_{value}"
    try:
        return check_user_key(key)
    except InvalidUserKeyError:
        raise InvalidUserKeyError(value) from None  # name what was typed, not our guess


def users_in(data_dir: Path) -> list[str]:
    """Every person with data here: a folder of files or a conversation (not a group's)."""
    keys = set(list_user_keys(data_dir))
    history = data_dir / "history"
    if history.is_dir():
        for path in history.glob("*.json"):
            try:
                keys.add(check_user_key(path.stem))
            except InvalidUserKeyError:
                continue  # not a person's conversation file
    return sorted(k for k in keys if not k.startswith(GROUP))


def pick_user(command: str, named: str, data_dir: Path, *, terminal: bool = False) -> str:
    """``named`` (``--user``, else ``PCAI_USER``) as a user key, else the only user of
    ``data_dir``; ``terminal``: only a ``cli_`` user counts, and with none yet "" (the chat
    starts a new one). Never a guess between people: several raise, naming them."""
    if named:
        return user_key_of(named)
    users = [k for k in users_in(data_dir) if not terminal or k.startswith(TERMINAL)]
    if len(users) == 1:
        return users[0]
    if not users and terminal:
        return ""
    ask = f"{command} needs a user: pass --user KEY or set PCAI_USER"
    if not users:
        raise UserNotChosenError(f"{ask} (no one has data in {data_dir} yet)")
    raise UserNotChosenError(f"{ask}; the users in {data_dir}: {', '.join(users)}")
