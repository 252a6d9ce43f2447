"""The library's front door: ``memory.open(data_dir) -> Memory``, usable with no bot/ at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import memory
from memory import E5Embedder, EntryNotFoundError, Memory, MemoryConfig, RetrievalConfig
from memory.base.fsutil import atomic_write_text
from memory.base.markdown import Entry, MemoryDocument, render_memory
from memory.write.decisions import DuplicateMemoryError, NoiseError, SensitiveDataError

ROOT = Path(__file__).resolve().parents[2]
TPE = timezone(timedelta(hours=8))
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=TPE)
ALICE, BOB = "cli_alice", "telegram_42"
COFFEE = "我每天早上喝黑咖啡，不加糖 black coffee every morning"
HIKING = "週末常去陽明山爬山 hiking on Saturdays"

SCRIPT = r"""
import json, sys

import memory

m = memory.open(sys.argv[1])
entry = m.remember("cli_me", "I take my coffee black, no sugar, every morning")
found = [h.chunk.unit_id for h in m.search("cli_me", "coffee")]
markdown = m.export("cli_me")
records = json.loads(m.export("cli_me", format="json"))
gone = [e.id for e in m.forget("cli_me", entry.id)]
after = [h.chunk.unit_id for h in m.search("cli_me", "coffee")]
m.close()
loaded = sorted(
    {name.split(".")[0] for name in sys.modules} & {"bot", "agent", "telegram", "ollama"}
)
print(json.dumps({"id": entry.id, "found": found, "markdown": markdown,
                  "records": [r["id"] for r in records], "gone": gone, "after": after,
                  "loaded": loaded}))
"""


def test_a_script_uses_the_library_with_no_bot_agent_telegram_or_ollama(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCAI_")}
    env["PYTHONPATH"] = str(ROOT)  # this checkout's memory/, whatever the venv points at
    data = tmp_path / "my-data"
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["loaded"] == []
    assert out["found"] == [out["id"]]
    assert "I take my coffee black" in out["markdown"] and out["records"] == [out["id"]]
    assert out["gone"] == [out["id"]] and out["after"] == []
    md = data / "users" / "cli_me" / "MEMORY.md"
    assert md.exists() and "coffee" not in md.read_text("utf-8")


def test_every_public_name_resolves() -> None:
    assert sorted(memory.__all__) == sorted(memory._HOME)  # type: ignore[attr-defined]
    for name in memory.__all__:
        assert getattr(memory, name) is not None, name
    assert memory.open.__module__ == "memory.api" and Memory.__module__ == "memory.api"
    with pytest.raises(AttributeError):
        _ = memory.no_such_name  # type: ignore[attr-defined]


def test_remember_goes_through_the_same_guards_as_chat(library: Memory) -> None:
    with pytest.raises(SensitiveDataError):
        library.remember(ALICE, "my password is hunter2 for the bank", now=T0)
    with pytest.raises(NoiseError):
        library.remember(ALICE, "hi", now=T0)
    entry = library.remember(ALICE, COFFEE, now=T0, canonical_topic="drink:coffee", user_weight=8)
    with pytest.raises(DuplicateMemoryError):
        library.remember(ALICE, COFFEE + "!", now=T0)
    assert library.entries(ALICE) == [entry]
    assert (entry.canonical_topic, entry.user_weight) == ("drink:coffee", 8)
    assert "hunter2" not in library.service.paths(ALICE).memory_md.read_text("utf-8")
    # Confirmed as the operator's own act: nothing is left waiting for an answer.
    assert library.pending.pending(ALICE) == []
    assert [h.chunk.unit_id for h in library.search(ALICE, "咖啡", now=T0)] == [entry.id]


class CountingEmbedder:
    """The real embedder, counting the queries it embeds."""

    def __init__(self, inner: E5Embedder) -> None:
        self.inner = inner
        self.queries = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_query(self, text: str) -> Any:
        self.queries += 1
        return self.inner.embed_query(text)


def test_explain_runs_the_search_once_and_shows_every_stage(
    data_dir: Path, embedder: E5Embedder
) -> None:
    counting = CountingEmbedder(embedder)
    with memory.open(data_dir, embedder=counting) as m:  # type: ignore[arg-type]
        kept = m.remember(ALICE, COFFEE, now=T0)
        m.remember(ALICE, HIKING, now=T0)
        m.remember(ALICE, "The quarterly tax report is due in April", now=T0)
        before = counting.queries
        res = m.search(ALICE, "咖啡 coffee", explain=True, now=T0)
        assert counting.queries == before + 1  # one run, not a second one to explain it
        plain = m.search(ALICE, "咖啡 coffee", now=T0)
    assert [h.chunk.unit_id for h in res.hits] == [h.chunk.unit_id for h in plain]
    assert [h.score for h in res.hits] == pytest.approx([h.score for h in plain])
    assert res.hits[0].chunk.unit_id == kept.id
    assert {"fusion", "decay", "mmr"} <= set(res.hits[0].stages)
    assert res.hits[0].stages["mmr"] == pytest.approx(res.hits[0].score)
    dropped = {d.chunk.text: d.stage for d in res.dropped}
    assert dropped and all(stage in ("min_score", "hard_min") for stage in dropped.values())
    assert COFFEE not in dropped


def test_get_finds_only_the_users_own_entry(library: Memory) -> None:
    entry = library.remember(ALICE, COFFEE, now=T0)
    assert library.get(ALICE, entry.id) == entry
    with pytest.raises(EntryNotFoundError) as missing:
        library.get(BOB, f" {entry.id} ")
    # a code and the id: the edge says it in the reader's one language (agent/texts)
    assert missing.value.code == "entry_missing" and missing.value.entry_id == entry.id
    with pytest.raises(EntryNotFoundError):
        library.forget(BOB, entry.id)
    assert library.entries(ALICE) == [entry]


def test_update_supersedes_and_history_shows_every_version(library: Memory) -> None:
    v1 = library.remember(
        ALICE, COFFEE, section="飲料", now=T0, canonical_topic="drink:coffee", user_weight=8
    )
    later = T0 + timedelta(days=1)
    v2 = library.update(ALICE, v1.id, "我現在改喝拿鐵 latte every morning", now=later)
    assert v2.supersedes == (v1.id,)
    assert (v2.section, v2.canonical_topic, v2.user_weight) == ("飲料", "drink:coffee", 8)
    old = library.get(ALICE, v1.id)
    assert old.status == "deprecated" and f"replaced by {v2.id}" in old.history[-1]
    found = [h.chunk.unit_id for h in library.search(ALICE, "morning coffee latte", now=later)]
    assert v2.id in found and v1.id not in found

    # Only the live version can be updated; a refused text changes nothing.
    with pytest.raises(ValueError, match="deprecated"):
        library.update(ALICE, v1.id, "another text entirely", now=later)
    with pytest.raises(SensitiveDataError):
        library.update(ALICE, v2.id, "latte; my password is hunter2", now=later)
    assert library.get(ALICE, v2.id).status == "active"

    # The same text with new fields is a new version too, not a duplicate.
    v3 = library.update(ALICE, v2.id, is_core=True, now=later + timedelta(hours=1))
    assert (v3.text, v3.is_core, v3.supersedes) == (v2.text, True, (v2.id,))
    chain = [v1.id, v2.id, v3.id]
    assert [e.id for e in library.history(ALICE, "drink:coffee")] == chain
    assert [e.id for e in library.history(ALICE, v1.id)] == chain
    assert [e.id for e in library.entries(ALICE) if e.status == "active"] == [v3.id]


def _db_files(data_dir: Path) -> list[Path]:
    return [p for p in data_dir.rglob("*") if p.is_file() and not p.name.endswith(".md")]


def test_forget_leaves_the_text_nowhere_in_the_markdown_index_or_pcai_db(
    library: Memory, data_dir: Path
) -> None:
    word = "quincemarmalade"
    v1 = library.remember(ALICE, f"My grandmother's {word} recipe uses honey", now=T0)
    v2 = library.update(ALICE, v1.id, f"My grandmother's {word} recipe uses sugar", now=T0)
    kept = library.remember(ALICE, HIKING, now=T0)
    assert any(word.encode() in p.read_bytes() for p in _db_files(data_dir))

    gone = library.forget(ALICE, v2.id)
    assert [e.id for e in gone] == [v1.id, v2.id]  # the version it replaced goes too
    assert library.entries(ALICE) == [kept]
    assert word not in library.service.paths(ALICE).memory_md.read_text("utf-8")
    assert word not in library.export(ALICE) and word not in library.export(ALICE, "json")
    assert {h.chunk.unit_id for h in library.search(ALICE, word)} <= {kept.id}
    assert [p.name for p in _db_files(data_dir) if word.encode() in p.read_bytes()] == []
    assert [h.chunk.unit_id for h in library.search(ALICE, "爬山 hiking")] == [kept.id]


def test_export_as_markdown_and_json(library: Memory) -> None:
    v1 = library.remember(ALICE, COFFEE, now=T0, canonical_topic="drink:coffee")
    v2 = library.update(ALICE, v1.id, "我現在改喝拿鐵 latte every morning", now=T0)
    library.access.bump(ALICE, [v2.id], T0)
    markdown = library.export(ALICE)
    assert markdown.startswith("# MEMORY") and COFFEE in markdown
    assert f"<!-- chain: {v1.id} (2026-11-01, deprecated) -> {v2.id}" in markdown
    records = {r["id"]: r for r in json.loads(library.export(ALICE, "json"))}
    assert list(records) == [v2.id]  # the older version is under the current one
    assert records[v2.id]["versions"][0]["superseded_by"] == [v2.id]
    assert records[v2.id]["access_count"] == 1
    assert json.loads(library.export(BOB, "json")) == []
    with pytest.raises(ValueError, match="markdown"):
        library.export(ALICE, "csv")  # type: ignore[arg-type]


def test_close_and_the_context_manager(data_dir: Path, embedder: E5Embedder) -> None:
    with memory.open(data_dir, embedder=embedder) as m:
        entry = m.remember(ALICE, COFFEE, now=T0)
    with pytest.raises(Exception, match="closed"):
        m.store.count()
    with pytest.raises(Exception, match="closed"):
        m.pending.pending(ALICE)
    m.close()  # a second close does nothing
    with memory.open(data_dir, embedder=embedder) as again:  # the data dir is as it was left
        assert again.entries(ALICE) == [entry]


def test_settings_are_memorys_own_config(data_dir: Path, embedder: E5Embedder) -> None:
    config = MemoryConfig(retrieval=RetrievalConfig(top_k=1), forget_undo_minutes=3)
    with memory.open(data_dir, embedder=embedder, settings=config) as m:
        m.remember(ALICE, COFFEE, now=T0)
        m.remember(ALICE, "咖啡豆要買淺焙的衣索比亞 light roast coffee beans", now=T0)
        assert len(m.search(ALICE, "coffee 咖啡", now=T0)) == 1
        assert len(m.search(ALICE, "coffee 咖啡", 5, now=T0)) == 2
        assert m.undo.window == timedelta(minutes=3)
    with memory.open(data_dir, embedder=embedder) as m:  # the defaults that ship
        assert m.settings == MemoryConfig() and len(m.search(ALICE, "coffee 咖啡", now=T0)) == 2


def test_open_indexes_markdown_written_by_hand(data_dir: Path, embedder: E5Embedder) -> None:
    md = data_dir / "users" / ALICE / "MEMORY.md"
    doc = MemoryDocument(entries=(Entry(id="m-hand", text=COFFEE, created_at=T0.isoformat()),))
    atomic_write_text(md, render_memory(doc))
    for _ in range(2):  # a fresh data dir, then one whose index was deleted
        with memory.open(data_dir, embedder=embedder) as m:
            assert m.store.count(ALICE) == 1  # indexed at open, before any search
            assert [h.chunk.unit_id for h in m.search(ALICE, "咖啡", now=T0)] == ["m-hand"]
        for f in (data_dir / "knowledge").iterdir():
            f.unlink()
