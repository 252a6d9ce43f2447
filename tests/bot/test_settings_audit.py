"""Every setting in the README does something (issue 13, item 9).

Two checks keep the table honest. Each setting is read somewhere outside the modules that
declare it (``PCAI_RETRIEVAL_MAX_SNIPPET_TOKENS`` was declared, documented and never read);
and each settings group, set from the environment, reaches the service that reads it (the
composition root does not hand a service a default copy instead). Most settings also have
their own behaviour tests next to the code they steer; the ones added with issue 13 have
theirs here.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_agent, build_services
from bot.fading import fade_every
from bot.jobs import default_jobs
from bot.settings import Settings, load_settings
from memory.base.markdown import Entry, MemoryDocument
from memory.index.embedders import E5Embedder
from tests.fakes.ollama_server import FakeOllama

ROOT = Path(__file__).resolve().parents[2]
DECLARING = {"memory/config.py", "history/config.py", "bot/settings.py"}


def every_field(cls: type = Settings, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(group, field name) of every setting."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            yield from every_field(hints[f.name], f.name)
        else:
            yield prefix, f.name


def attributes_read() -> set[str]:
    """Every attribute name read (``x.name``) in the packages, outside the declaring files."""
    names: set[str] = set()
    for package in ("agent", "bot", "history", "memory"):
        for path in (ROOT / package).rglob("*.py"):
            if path.relative_to(ROOT).as_posix() in DECLARING:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names.update(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute))
    return names


def test_every_setting_is_read_somewhere() -> None:
    read = attributes_read()
    unread = [f"{group}.{name}" for group, name in every_field() if name not in read]
    assert unread == []


def test_max_snippet_tokens_is_gone() -> None:
    names = {name for _, name in every_field()}
    assert "max_snippet_tokens" not in names
    for doc in ("README.md", "docs/settings.md"):
        assert "MAX_SNIPPET_TOKENS" not in (ROOT / doc).read_text(encoding="utf-8")


# Values unlike every default, so a service holding a default copy is caught.
ODD: dict[str, str] = {}
for _group, _name in every_field():
    if not _group:
        continue
    _default = getattr(getattr(Settings(), _group), _name)
    _env = f"PCAI_{_group.upper()}_{_name.upper()}"
    if isinstance(_default, bool):
        ODD[_env] = "false" if _default else "true"
    elif isinstance(_default, int):
        ODD[_env] = str(_default + 3)
    elif isinstance(_default, float):
        ODD[_env] = str(round(_default + 0.03, 4))
ODD["PCAI_RETRIEVAL_FUSION"] = "rrf"


@pytest.fixture
def odd(tmp_path: Path, embedder: E5Embedder, fake_ollama: FakeOllama) -> Iterator[Any]:
    env = {
        **ODD,
        "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
        "OLLAMA_HOST": fake_ollama.url,
        "PCAI_FORGET_UNDO_MINUTES": "17",
        "PCAI_TIMEZONE": "Asia/Taipei",
        "PCAI_OLLAMA_TIMEOUT_SECONDS": "33",
        "PCAI_REMINDERS_SNOOZE_MINUTES": "0.05",
        # A context so large that the budgets stand as set (a small one shrinks them).
        "PCAI_CONTEXT_TOKENS": "131072",
        "PCAI_KEEP_ALIVE": "2h",
    }
    settings = load_settings(env)
    services = build_services(settings, embedder=embedder)
    build_agent(services)
    yield services
    services.close()


def test_each_settings_group_reaches_the_service_that_reads_it(odd: Any) -> None:
    s, agent = odd.settings, odd.agent
    for group, _name in every_field():
        if group:
            assert getattr(s, group) != getattr(Settings(), group), group  # all set odd
    assert odd.memory.searcher.config is s.retrieval
    assert odd.memory.indexer.config is s.index
    assert odd.pending.config is s.pending
    assert (odd.governance.top_k, odd.governance.similarity) == (
        s.pending.conflict_top_k,
        s.pending.conflict_similarity,
    )
    assert odd.lifecycle.config is s.lifecycle
    assert agent.view.budget is s.budget
    assert agent.llm.context_tokens == 131072 and agent.llm._keep_alive == "2h"
    assert agent.history is s.history and agent.compactor.config is s.history
    assert odd.idle.config is s.history
    assert agent.topics.config is s.topic_index
    assert odd.forgetter.minutes == 17
    assert str(odd.tz) == "Asia/Taipei" and odd.daily_log.tz is odd.tz
    assert odd.summaries.timeout == 33
    assert odd.reminders.snooze_length == timedelta(seconds=3)
    assert fade_every(odd) == timedelta(hours=s.lifecycle.fade_every_hours)


def test_adaptive_settings_steer_the_search_decision(odd: Any, tmp_path: Path) -> None:
    question = "明天開會帶筆電"  # seven characters, no question mark
    assert odd.agent.view.should_search(question, 1) is False  # min_chars 8 there
    plain = build_services(
        load_settings({"PCAI_DATA_DIR": str(tmp_path / "plain")}),
        embedder=odd.embedder,
    )
    try:
        build_agent(plain)
        assert plain.agent is not None and plain.agent.view.should_search(question, 1) is True
    finally:
        plain.close()


def test_fade_notice_days_sets_how_long_a_notice_must_be_old(
    tmp_path: Path, embedder: Any
) -> None:
    now = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
    services = build_services(
        load_settings(
            {"PCAI_DATA_DIR": str(tmp_path / "d"), "PCAI_LIFECYCLE_FADE_NOTICE_DAYS": "2"}
        ),
        embedder=embedder,
    )
    try:
        old = (now - timedelta(days=120)).isoformat(timespec="seconds")
        entry = Entry(id="m-old", text="I once tried durian ice cream", created_at=old)
        services.memory.write_document(
            "telegram_1", MemoryDocument(sections=("General",), entries=(entry,))
        )
        services.lifecycle.told("telegram_1", ["m-old"], now - timedelta(days=2))
        [change] = services.lifecycle.run_lifecycle(now).changes
        assert change.new == "archived"  # two days, not the default seven
    finally:
        services.close()


def test_fade_every_hours_schedules_the_fading_job() -> None:
    [spec] = [s for s in default_jobs(fade_every=timedelta(hours=0.01)) if s.name == "fading"]
    assert spec.every == timedelta(seconds=36) and spec.first == timedelta(seconds=15)
    [weekly] = [s for s in default_jobs() if s.name == "fading"]
    assert weekly.every == timedelta(days=7)
