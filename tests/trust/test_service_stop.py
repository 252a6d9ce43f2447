"""Promise 10: the service stops without losing a turn, in a sandbox systemd rates 2.5 or below."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from agent.tools import MAX_TOOL_ROUNDS
from bot.settings import load_settings

UNIT = Path(__file__).resolve().parents[2] / "deploy" / "pcai.service"


def _service_settings() -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    section = ""
    for raw in UNIT.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "Service" and "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values.setdefault(key, []).append(value)
    return values


def test_systemd_waits_out_the_longest_turn_before_killing() -> None:
    """A turn: one compaction summary, the tool rounds and the final answer, each one model
    call of up to the default model timeout. SIGKILL before that loses the turn in hand."""
    per_call = load_settings({}).ollama_timeout_seconds
    longest_turn = (1 + MAX_TOOL_ROUNDS + 1) * per_call
    stop = _service_settings()["TimeoutStopSec"]
    assert len(stop) == 1 and stop[0].isdigit()
    assert int(stop[0]) >= longest_turn + 60  # and a minute for the flush


def test_the_sandbox_keeps_what_the_bot_needs() -> None:
    unit = _service_settings()
    # The network (Telegram, Ollama) and the data folder; nothing else is writable.
    assert unit["RestrictAddressFamilies"] == ["AF_INET AF_INET6 AF_UNIX"]
    assert "PrivateNetwork" not in unit
    assert unit["ProtectSystem"] == ["strict"] and unit["ReadWritePaths"] == ["/var/lib/pcai"]
    assert unit["CapabilityBoundingSet"] == [""]
    assert unit["SystemCallFilter"][0] == "@system-service"


def test_systemd_rates_the_unit_2_5_or_below() -> None:
    # `make test` installs it (the system-deps step); never skipped, so a missing tool is seen.
    assert shutil.which("systemd-analyze"), "needs systemd-analyze: apt-get install systemd"
    out = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", "--no-pager", str(UNIT)],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    found = re.search(r"Overall exposure level for pcai\.service: (\d+\.\d+)", out)
    assert found is not None, out
    assert float(found.group(1)) <= 2.5, out
