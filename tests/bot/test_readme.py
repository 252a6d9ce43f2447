"""The settings table (docs/settings.md, linked from the README) lists every setting with the
default the code has."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from bot.settings import ENV_ALIASES, Settings

TABLE = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def shown(value: Any) -> str:
    """How a default is written in the table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value)


def every_setting() -> list[tuple[str, str]]:
    """(environment name, default as written) of every setting."""
    rows = []
    defaults = Settings()
    for f in dataclasses.fields(Settings):
        value = getattr(defaults, f.name)
        if dataclasses.is_dataclass(value):
            for g in dataclasses.fields(value):
                name = f"PCAI_{f.name.upper()}_{g.name.upper()}"
                rows.append((name, shown(getattr(value, g.name))))
        else:
            rows.append((ENV_ALIASES.get(f.name, f"PCAI_{f.name.upper()}"), shown(value)))
    return rows


def test_every_setting_is_in_the_readme_with_its_default() -> None:
    text = TABLE.read_text(encoding="utf-8")
    missing = [
        (name, default)
        for name, default in every_setting()
        if f"| `{name}` | `{default}` |" not in text
    ]
    assert missing == []
