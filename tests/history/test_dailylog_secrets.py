"""Secrets typed in chat never reach the long-term, indexed daily log."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from history.dailylog import DailyLog
from memory.base.guards import REDACTED
from memory.base.logs import parse_log


def test_card_numbers_and_passwords_are_masked_in_the_daily_log(tmp_path: Path) -> None:
    log = DailyLog(tmp_path, UTC)
    when = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
    log.append_user_message("cli_ann", "我的卡號是 4111 1111 1111 1111，明天要繳費", when)
    log.append_user_message("cli_ann", "my password: Tr0ub4dor&3 for the router", when)
    log.append_user_message("cli_ann", "明天早上九點開會，記得帶筆電", when)

    text = (tmp_path / "users" / "cli_ann" / "memory" / "2026-11-22.md").read_text("utf-8")
    assert "4111 1111 1111 1111" not in text and "Tr0ub4dor&3" not in text
    records = parse_log("2026-11-22", text)
    assert [REDACTED in r.text for r in records] == [True, True, False]
    assert records[0].text.endswith("明天要繳費")  # only the secret itself is cut
    assert records[2].text == "明天早上九點開會，記得帶筆電"
