"""The ``pcai`` operator commands, run in-process through ``bot.cli.main``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ALICE = "cli_alice"
MEMORIES = [
    "我每天早上都喝咖啡，不加糖也不加奶",
    "我最喜歡的顏色是藍色，房間也漆成藍色",
    "We deploy to production every Friday afternoon",
    "週末常去陽明山爬山 hiking with friends, usually on Saturday",
    "咖啡豆要買淺焙的衣索比亞 light roast Ethiopian beans",
]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("PCAI_") or name in ("TELEGRAM_BOT_TOKEN", "OLLAMA_HOST"):
            monkeypatch.delenv(name)
    data = tmp_path / "botmemory"
    monkeypatch.setenv("PCAI_DATA_DIR", str(data))
    return data


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def _without_scores(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "score"} for r in rows]


def test_rebuild_after_deleting_the_index_gives_the_same_results(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in MEMORIES:
        assert run_json(capsys, "remember", "--user", ALICE, "--json", text)["id"]
    queries = ["咖啡", "藍色", "deploy Friday", "爬山 hiking", "what beans should I buy?"]
    before = {q: run_json(capsys, "search", "--user", ALICE, "--json", q) for q in queries}
    assert any(before.values())

    index = data_dir / "knowledge" / "pcai_memory.sqlite"
    assert index.exists()
    for f in index.parent.iterdir():  # the database and its WAL/SHM companions
        f.unlink()

    for q in queries:
        after = run_json(capsys, "search", "--user", ALICE, "--json", q)
        assert _without_scores(after) == _without_scores(before[q])
        # Scores may move by the seconds of time decay between the runs, nothing more.
        assert [r["score"] for r in after] == pytest.approx(
            [r["score"] for r in before[q]], abs=1e-4
        )
    assert index.exists()


def test_remember_search_and_export(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    added = run_json(
        capsys, "remember", "--user", ALICE, "--section", "偏好", "--json", MEMORIES[0]
    )
    assert added["section"] == "偏好"
    code, out, _ = run(capsys, "remember", "--user", "telegram_42", MEMORIES[1])
    assert code == 0 and "remembered" in out

    rows = run_json(capsys, "search", "--user", ALICE, "--json", "--explain", "咖啡")
    assert rows and rows[0]["id"] == added["id"] and rows[0]["section"] == "偏好"
    assert {"score", "text", "kind", "path", "refs", "explain"} <= set(rows[0])
    assert all(r["user_key"] == ALICE for r in rows)

    code, out, _ = run(capsys, "search", "--user", ALICE, "-k", "3", "咖啡")
    assert code == 0 and "1. [" in out

    exported = run_json(capsys, "export", "--user", ALICE, "--json")
    assert [e["text"] for e in exported] == [MEMORIES[0]]
    code, md, _ = run(capsys, "export", "--user", ALICE)
    assert code == 0 and MEMORIES[0] in md and MEMORIES[1] not in md
    # Bob's memory stays Bob's.
    bob = run_json(capsys, "search", "--user", "telegram_42", "--json", "咖啡 藍色")
    assert all(r["user_key"] == "telegram_42" for r in bob)
    assert MEMORIES[0] not in json.dumps(bob, ensure_ascii=False)


def test_remember_goes_through_the_write_path_guards(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "remember", "--user", ALICE, "我的信用卡號 4111 1111 1111 1111")
    assert code == 1 and out == "" and err.startswith("pcai: ") and "4111" not in err
    assert not (data_dir / "users" / ALICE / "MEMORY.md").exists()
    run_json(capsys, "remember", "--user", ALICE, "--json", MEMORIES[0])
    code, _, err = run(capsys, "remember", "--user", ALICE, MEMORIES[0])
    assert code == 1 and "already remember" in err  # a duplicate is refused, not added twice


def test_reindex_reports_what_it_did(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_json(capsys, "remember", "--user", ALICE, "--json", MEMORIES[2])
    code, out, err = run(capsys, "reindex", "--user", ALICE)
    assert code == 0 and out.startswith("indexed ") and "reindex [" in err
    # An intact index: every file is read again, nothing unchanged is re-embedded.
    code, out, _ = run(capsys, "reindex")
    assert code == 0 and out == "indexed 0 units from 1 files, removed 0\n"
    (data_dir / "users" / ALICE / "MEMORY.md").write_text("- 手寫的一條新記憶 hand-written\n")
    code, out, _ = run(capsys, "reindex")
    assert code == 0 and out == "indexed 1 units from 1 files, removed 1\n"


def test_config_masks_the_telegram_token(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("PCAI_RETRIEVAL_HARD_MIN_SCORE", "0.4")
    code, out, _ = run(capsys, "config")
    assert code == 0
    cfg = json.loads(out)
    assert TOKEN not in out and "AAHdq" not in out
    assert cfg["telegram_bot_token"] == "123456789:****"
    assert cfg["retrieval"]["hard_min_score"] == 0.4
    assert cfg["data_dir"] == str(data_dir)


@pytest.mark.parametrize("user", ["../x", "cli_a/../../b", "nobody"])
def test_invalid_user_key_is_one_clear_line(
    data_dir: Path, capsys: pytest.CaptureFixture[str], user: str
) -> None:
    for argv in (["search", "--user", user, "x"], ["remember", "--user", user, "x"]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == ""
        assert err.startswith("pcai: ") and "valid user key" in err and "Traceback" not in err


def test_bad_settings_exit_2(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PCAI_RETRIEVAL_TOP_K", "many")
    code, _, err = run(capsys, "config")
    assert code == 2 and err.startswith("pcai: ")
