"""The composition root and the CLI build memory through ``memory.open`` and use its door."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_services
from bot.cli import main
from bot.settings import load_settings
from memory import E5Embedder, Memory
from memory.search.hybrid import HybridSearcher

ALICE = "cli_alice"


def test_the_services_are_the_memory_librarys_own(tmp_path: Path, embedder: E5Embedder) -> None:
    env = {
        "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
        "PCAI_RETRIEVAL_TOP_K": "2",
        "PCAI_PENDING_TTL_MINUTES": "7",
        "PCAI_FORGET_UNDO_MINUTES": "3",
    }
    services = build_services(load_settings(env), embedder=embedder)
    try:
        lib = services.library
        assert isinstance(lib, Memory) and lib.data_dir == services.settings.data_dir
        parts = ("store", "state", "pending", "access", "governance", "confirm", "lifecycle")
        for name in parts:
            assert getattr(services, name) is getattr(lib, name), name
        assert services.memory is lib.service and services.user_acts is lib.user_acts
        assert services.forgetter.undo_store is lib.undo
        # The settings reach memory's own config: one reading, passed down.
        assert lib.settings.retrieval.top_k == 2 and lib.searcher.config.top_k == 2
        assert lib.pending.config.ttl_minutes == 7
        assert lib.undo.window == timedelta(minutes=3)
    finally:
        services.close()
    with pytest.raises(Exception, match="closed"):
        lib.store.count()


def test_search_explain_runs_the_pipeline_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name.startswith("PCAI_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PCAI_DATA_DIR", str(tmp_path / "botmemory"))
    assert main(["remember", "--user", ALICE, "我每天早上都喝咖啡，不加糖也不加奶"]) == 0
    runs: list[str] = []
    original = HybridSearcher.search_with_vector

    def counted(self: HybridSearcher, user_key: str, query: str, *a: Any, **kw: Any) -> Any:
        runs.append(query)
        return original(self, user_key, query, *a, **kw)

    monkeypatch.setattr(HybridSearcher, "search_with_vector", counted)
    capsys.readouterr()
    assert main(["search", "--user", ALICE, "--explain", "咖啡"]) == 0
    out = capsys.readouterr().out
    assert runs == ["咖啡"]  # one run: the same one is shown and explained
    assert "咖啡" in out and "fusion" in out and "mmr" in out


def test_the_agent_never_holds_the_front_door() -> None:
    # A Memory carries the user-act mint (its own remember/update confirm as the operator):
    # the agent is built from single services, so no module of agent/ may reach for the door.
    root = Path(__file__).resolve().parents[2] / "agent"
    door = re.compile(r"\bMemory\b|\blibrary\b|memory\.open|memory\.api|^import memory\b", re.M)
    catalogue = root / "texts"  # sentences for people ("Memory commands still work"), not code
    sources = {p: p.read_text("utf-8") for p in root.rglob("*.py") if catalogue not in p.parents}
    assert len(sources) > 10
    assert {str(p): door.findall(s) for p, s in sources.items() if door.search(s)} == {}
