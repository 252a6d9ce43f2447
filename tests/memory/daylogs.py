"""Write a user's daily log by hand and index it, as the bot's log would be after a day."""

from __future__ import annotations

from datetime import datetime, timedelta

from memory import Memory
from memory.base.logs import format_record, log_header


def write_day_log(library: Memory, user: str, day: str, lines: list[tuple[str, str, str]]) -> None:
    """``memory/<day>.md`` of ``user`` with ``(who, text, ref)`` records a second apart from
    10:00, indexed."""
    path = library.service.paths(user).root / "memory" / f"{day}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    when = datetime.fromisoformat(f"{day}T10:00:00")
    body = log_header(day) + "".join(
        format_record(when + timedelta(seconds=i), who, text, ref)
        for i, (who, text, ref) in enumerate(lines)
    )
    path.write_text(body, encoding="utf-8")
    library.service.indexer.sync_file(user, f"memory/{day}.md")


def fused_by_ref(library: Memory, user: str, query: str, now: datetime) -> dict[str, float]:
    """Each hit of ``query``'s search as of ``now``, by its record's ref: its fused score."""
    res = library.service.searcher.search_explained(user, query, 10, now=now)
    return {h.chunk.refs[0]: h.stages["fusion"] for h in res.hits}
