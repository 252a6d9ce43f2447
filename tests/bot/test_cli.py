"""The ``pcai`` operator commands, run in-process through ``bot.cli.main``."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.cli_parser import EXIT_CODES, build_parser
from history.sessions import Session, SessionStore
from memory.base.locks import ServiceLock
from tests.fakes.ollama_server import FakeOllama

ROOT = Path(__file__).resolve().parents[2]

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
def data_dir(clean_environment: Path) -> Path:
    """The data dir PCAI_DATA_DIR points at (tests/conftest.py strips every other setting),
    made already: a command that makes it says so on stderr (tests/bot/test_data_dir.py)."""
    clean_environment.mkdir(parents=True, exist_ok=True)
    return clean_environment


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """One JSON object on one line (commands that print one thing)."""
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert out.count("\n") == 1, out
    return json.loads(out)


def run_lines(capsys: pytest.CaptureFixture[str], *argv: str) -> list[Any]:
    """JSON lines (commands that print many things), every line one object."""
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def _without_scores(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "score"} for r in rows]


def test_rebuild_after_deleting_the_index_gives_the_same_results(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in MEMORIES:
        assert run_json(capsys, "remember", "--user", ALICE, "--json", text)["id"]
    queries = ["咖啡", "藍色", "deploy Friday", "爬山 hiking", "what beans should I buy?"]
    before = {q: run_lines(capsys, "search", "--user", ALICE, "--json", q) for q in queries}
    assert any(before.values())

    index = data_dir / "knowledge" / "pcai_memory.sqlite"
    assert index.exists()
    for f in index.parent.iterdir():  # the database and its WAL/SHM companions
        f.unlink()

    for q in queries:
        after = run_lines(capsys, "search", "--user", ALICE, "--json", q)
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
    assert added["section"] == "偏好 Preferences"  # either half names the two-name section
    code, out, _ = run(capsys, "remember", "--user", "telegram_42", MEMORIES[1])
    assert code == 0 and "remembered" in out

    rows = run_lines(capsys, "search", "--user", ALICE, "--json", "--explain", "咖啡")
    assert rows and rows[0]["id"] == added["id"] and rows[0]["section"] == "偏好 Preferences"
    assert {"score", "text", "kind", "path", "refs", "explain"} <= set(rows[0])
    assert all(r["user_key"] == ALICE for r in rows)

    code, out, _ = run(capsys, "search", "--user", ALICE, "-k", "3", "咖啡")
    assert code == 0 and "1. [" in out

    exported = run_lines(capsys, "export", "--user", ALICE, "--json")
    assert [e["text"] for e in exported] == [MEMORIES[0]]
    code, document, _ = run(capsys, "export", "--user", ALICE, "--format", "json")
    assert code == 0 and json.loads(document) == exported  # the backup format: one array
    code, md, _ = run(capsys, "export", "--user", ALICE)
    assert code == 0 and MEMORIES[0] in md and MEMORIES[1] not in md
    # Bob's memory stays Bob's.
    bob = run_lines(capsys, "search", "--user", "telegram_42", "--json", "咖啡 藍色")
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
    # A reindex that stops half-way (the second user's file is not UTF-8) ends its bar's line:
    # the error is a line of its own, not glued after "1/2".
    (data_dir / "users" / "cli_zed").mkdir()
    (data_dir / "users" / "cli_zed" / "MEMORY.md").write_bytes(b"# MEMORY\n\n- caf\xe9\n")
    code, _, err = run(capsys, "reindex")
    bar, said = err.splitlines()[-2:]
    assert code == 1 and bar.endswith("] 1/2") and said.startswith("pcai: ") and err[-1] == "\n"


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


# -- errors: one line on stderr, the documented exit code ---------------------------------
ERRORS = [
    # (environment, arguments, exit code, what the one line says)
    ({}, [], 2, "the following arguments are required: COMMAND"),
    ({}, ["serch", "x"], 2, "invalid choice: 'serch'"),
    ({}, ["search", "--user", ALICE], 2, "the following arguments are required: query"),
    ({}, ["search", "--user", ALICE, "--nope", "x"], 2, "unrecognized arguments: --nope"),
    ({}, ["search", "--user", ALICE, "-k", "0", "x"], 2, "argument -k: must be a whole number"),
    ({}, ["search", "--user", ALICE, "-k", "many", "x"], 2, "argument -k: must be a whole"),
    ({}, ["export", "--user", ALICE, "--format", "pdf"], 2, "invalid choice: 'pdf'"),
    ({}, ["search", "咖啡"], 2, "search needs a user: pass --user KEY or set PCAI_USER"),
    ({}, ["remember", "我喜歡藍色"], 2, "remember needs a user"),
    ({}, ["export"], 2, "export needs a user"),
    ({}, ["--config", "missing.toml", "config"], 2, "cannot read config file missing.toml"),
    ({"PCAI_RETRIEVAL_TOP_K": "many"}, ["config"], 2, "PCAI_RETRIEVAL_TOP_K cannot be 'many'"),
    ({"PCAI_USER": "../x"}, ["config"], 2, "PCAI_USER must be a user key like cli_alice"),
    ({}, ["search", "--user", "../x", "x"], 1, "not a valid user key: '../x'"),
    ({}, ["search", "--user", "cli_a/../../b", "x"], 1, "not a valid user key"),
    ({}, ["remember", "--user", "no body", "x"], 1, "not a valid user key: 'no body'"),
    ({}, ["export", "--user", "../x"], 1, "not a valid user key"),
    ({}, ["search", "--user", ALICE, " "], 1, "the query is empty"),
    ({}, ["remember", "--user", ALICE, "我的卡號 4111 1111 1111 1111"], 1, "payment card number"),
    ({"PCAI_DATA_DIR": "/dev/null/botmemory"}, ["export", "--user", ALICE], 1, "Not a directory"),
]


@pytest.mark.parametrize(("env", "args", "code", "expected_error"), ERRORS)
def test_errors_are_one_line_with_their_exit_code(
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    args: list[str],
    code: int,
    expected_error: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    got, out, err = run(capsys, *args)
    assert (got, out) == (code, "")
    assert err.startswith("pcai: ") and err.count("\n") == 1, err
    assert expected_error in err
    assert "4111" not in err  # an error never repeats a secret it refused


def test_a_real_process_writes_only_the_error_line(tmp_path: Path) -> None:
    # Logging also writes to stderr: a one-shot command logs only problems.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PCAI_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "search", "--user", "../x", "coffee"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "pcai: not a valid user key: '../x'\n"


def test_ctrl_c_exits_130_in_one_line(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt  # what Python raises when Ctrl-C arrives

    monkeypatch.setattr("bot.cli.settings_as_dict", interrupted)
    assert run(capsys, "config") == (130, "", "pcai: interrupted\n")


# -- version, PCAI_USER ---------------------------------------------------------------------
def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"pcai {version('pcai')}\n"
    assert re.fullmatch(r"pcai \d+\.\d+\.\d+\S*\n", out)


def test_pcai_user_is_the_default_user(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PCAI_USER", ALICE)
    added = run_json(capsys, "remember", "--json", MEMORIES[0])
    assert (data_dir / "users" / ALICE / "MEMORY.md").read_text("utf-8").count(MEMORIES[0]) == 1
    hits = run_lines(capsys, "search", "--json", "咖啡")
    assert hits[0]["id"] == added["id"] and {h["user_key"] for h in hits} == {ALICE}
    assert [e["text"] for e in run_lines(capsys, "export", "--json")] == [MEMORIES[0]]
    # --user wins over PCAI_USER.
    run_json(capsys, "remember", "--user", "telegram_42", "--json", MEMORIES[1])
    assert [
        h["user_key"]
        for h in run_lines(capsys, "search", "--user", "telegram_42", "--json", "藍色")
    ] == ["telegram_42"]
    assert MEMORIES[1] not in json.dumps(run_lines(capsys, "export", "--json"), ensure_ascii=False)
    # reindex without --user is every user's files: PCAI_USER does not narrow it.
    assert run_json(capsys, "reindex", "--json")["files"] == 2


@pytest.mark.parametrize(
    ("pcai_user", "shown", "not_shown"),
    [("cli_ann", "cli_ann", "cli_zoe"), ("telegram_42", "cli_zoe", "telegram_42")],
)
def test_the_terminal_chat_takes_a_cli_pcai_user(
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_ollama: FakeOllama,
    pcai_user: str,
    shown: str,
    not_shown: str,
) -> None:
    # cli_ann chats as ann; a Telegram key is no terminal user, so the latest session resumes.
    SessionStore(data_dir / "history").save(Session("cli_zoe"))
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("PCAI_USER", pcai_user)
    monkeypatch.setattr("sys.stdin", io.StringIO("/quit\n"))
    code, out, _ = run(capsys, "chat")
    assert code == 0 and shown in out and not_shown not in out


# -- one rule for who a command acts as -----------------------------------------------------
def test_without_user_a_command_acts_as_the_only_user(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    added = run_json(capsys, "remember", "--user", ALICE, "--json", MEMORIES[0])
    hits = run_lines(capsys, "search", "--json", "咖啡")  # was: "search needs a user"
    assert hits[0]["id"] == added["id"] and {h["user_key"] for h in hits} == {ALICE}
    assert [e["text"] for e in run_lines(capsys, "export", "--json")] == [MEMORIES[0]]
    # web-link gets past the user too: what stops it is that no pcai run serves the folder
    code, out, err = run(capsys, "web-link")
    assert (code, out) == (1, "") and "no pcai run serves" in err


@pytest.mark.parametrize("command", [["search", "咖啡"], ["export"], ["web-link"]])
def test_with_several_users_the_error_lists_them(
    data_dir: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    run_json(capsys, "remember", "--user", ALICE, "--json", MEMORIES[0])
    run_json(capsys, "remember", "--user", "telegram_42", "--json", MEMORIES[1])
    code, out, err = run(capsys, *command)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"pcai: {command[0]} needs a user: pass --user KEY or set PCAI_USER")
    assert "cli_alice, telegram_42" in err
    assert MEMORIES[0] not in err and MEMORIES[1] not in err


def test_web_link_on_a_new_folder_leaves_no_lock_behind(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "web-link", "--user", ALICE)
    assert (code, out) == (1, "") and "no pcai run serves" in err
    assert sorted(p.name for p in data_dir.iterdir()) == []  # was: pcai.lock
    with ServiceLock(data_dir):  # while a service holds the folder, the look sees it
        (data_dir / "web.url").write_text("http://127.0.0.1:8123\n", encoding="utf-8")
        assert run_json(capsys, "web-link", "--user", ALICE, "--json")["user_key"] == ALICE


@pytest.mark.parametrize("command", ["search", "export", "web-link", "remember"])
def test_the_help_says_the_rule(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "$PCAI_USER, else the only user in the data folder" in said
    assert "several: an error lists them" in said


# -- --json on every command that prints data, from the one helper ----------------------
DATA_COMMANDS = {
    "config",
    "doctor",
    "remember",
    "search",
    "reindex",
    "export",
    "web-link",
    "backup",
    "restore",
}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_data_command_has_the_shared_json_option() -> None:
    with_json = {
        name: [a for a in sub._actions if "--json" in a.option_strings]
        for name, sub in _subcommands(build_parser()).items()
    }
    assert {name for name, found in with_json.items() if found} == DATA_COMMANDS
    helps = {found[0].help for found in with_json.values() if found}
    assert helps == {
        "machine-readable output: one JSON object on one line",
        "machine-readable output: JSON lines, one object per line",
    }


def test_json_output_of_every_data_command_parses(
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_ollama: FakeOllama,
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("PCAI_WEB_PORT", "0")  # the page line never depends on this machine
    seen = set()
    for text in MEMORIES[:2]:
        assert run_json(capsys, "remember", "--user", ALICE, "--json", text)["section"]
    seen.add("remember")
    assert run_json(capsys, "config", "--json")["data_dir"] == str(data_dir)
    seen.add("config")
    checks = run_lines(capsys, "doctor", "--json")  # no token: Telegram skipped, exit 0
    assert [c["status"] for c in checks] == ["ok"] * 9 + ["skip"]
    assert [c["check"] for c in checks][-1] == "telegram" and all(c["detail"] for c in checks)
    seen.add("doctor")
    hits = run_lines(capsys, "search", "--user", ALICE, "--json", "咖啡 藍色")
    assert {h["text"] for h in hits} == set(MEMORIES[:2])
    seen.add("search")
    assert run_json(capsys, "reindex", "--json") == {"added": 0, "files": 1, "removed": 0}
    seen.add("reindex")
    exported = run_lines(capsys, "export", "--user", ALICE, "--json")
    assert [e["text"] for e in exported] == MEMORIES[:2]
    seen.add("export")
    taken = run_json(capsys, "backup", "--json", str(data_dir.parent / "backups"))
    assert taken["backed_up"] and taken["users"] == 1
    assert run_json(capsys, "backup", "--json", "--verify", taken["path"])["verified"]
    seen.add("backup")
    other = str(data_dir.parent / "restored")
    restored = run_json(capsys, "restore", "--json", taken["path"], "--data", other)
    assert restored["restored"] and restored["files"] == taken["files"]
    seen.add("restore")
    with ServiceLock(data_dir):  # a running bot whose page listens on 8123 (web.url says so)
        (data_dir / "web.url").write_text("http://127.0.0.1:8123\n", encoding="utf-8")
        link = run_json(capsys, "web-link", "--user", ALICE, "--json")
    assert link["url"].startswith("http://127.0.0.1:8123/login?t=")
    seen.add("web-link")
    assert seen == DATA_COMMANDS


# -- help: every command and option explains itself ------------------------------------
def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    root = build_parser()
    return [("pcai", root), *((f"pcai {n}", p) for n, p in _subcommands(root).items())]


def test_every_option_and_command_has_help() -> None:
    missing = [
        f"{prog} {'/'.join(a.option_strings) or a.dest}"
        for prog, parser in _parsers()
        for a in parser._actions
        if not (a.help or "").strip()
    ]
    assert missing == []
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    summaries = {c.dest: c.help for c in sub._choices_actions}
    assert set(summaries) == set(sub.choices) and all(summaries.values())


@pytest.mark.parametrize("command", sorted(_subcommands(build_parser())))
def test_every_command_shows_examples(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    examples = out.split("examples:\n", 1)[1].splitlines()
    assert examples and all(f"pcai {command}" in line for line in examples if line.strip())


def test_the_root_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and out.endswith(EXIT_CODES)
    assert [line.split()[0] for line in EXIT_CODES.splitlines()[1:] if line[2] != " "] == [
        "0",
        "1",
        "2",
        "130",
    ]
    assert "PCAI_USER" in out and "examples:" in out


@pytest.mark.parametrize("xdg", ["", "/srv/xdg-data"])
def test_the_root_help_names_the_data_folder_the_settings_use(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, xdg: str
) -> None:
    """`pcai --help` said ./botmemory while the default is ~/.local/share/pcai (or the XDG
    data home): each default it names is the one the settings pick, in its case."""
    from bot.settings import load_settings

    code, out, _ = run(capsys, "--help")
    said = re.search(r"PCAI_DATA_DIR\s+[^(]*\(default: ([^)]*)\)", out)
    assert code == 0 and said is not None, out
    with_xdg, _, without = said.group(1).partition(", else ")
    env = {"HOME": str(tmp_path / "home")} | ({"XDG_DATA_HOME": xdg} if xdg else {})
    named = with_xdg.replace("$XDG_DATA_HOME", xdg) if xdg else without
    assert Path(named.replace("~", env["HOME"], 1)) == load_settings(env).data_dir
