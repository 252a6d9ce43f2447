"""`pcai chat` resumes the latest terminal session and runs the scheduled jobs meanwhile."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from bot.cli import main
from history.sessions import Session, SessionStore


def test_chat_without_user_never_guesses_between_terminal_users(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Was: the latest session's user (as root, another person's key). Now an error naming them.
    store = SessionStore(data_dir / "history")
    older, newer = Session("cli_ann"), Session("cli_zoe")
    older.append("user", "hello from ann")
    store.save(older)
    newer.append("user", "hello from zoe")
    store.save(newer)
    os.utime(data_dir / "history" / "cli_ann.json", (1, 1))  # ann's is clearly older

    monkeypatch.setattr("sys.stdin", io.StringIO("/remember 我喜歡在週末去陽明山爬山\n/quit\n"))
    assert main(["chat"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "chat needs a user: pass --user KEY or set PCAI_USER" in err
    assert "cli_ann, cli_zoe" in err
    assert not (data_dir / "users").exists()  # nothing was written as anyone


def test_chat_without_user_opens_the_only_terminal_user(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore(data_dir / "history")
    store.save(Session("cli_zoe"))
    store.save(Session("telegram_42"))  # another front end's user: not a terminal user
    monkeypatch.setattr("sys.stdin", io.StringIO("/quit\n"))
    assert main(["chat"]) == 0
    assert "PCAI terminal chat as cli_zoe." in capsys.readouterr().out


def test_chat_user_flag_wins_over_the_latest_session(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore(data_dir / "history")
    store.save(Session("cli_zoe"))
    monkeypatch.setattr("sys.stdin", io.StringIO("/quit\n"))
    assert main(["chat", "--user", "ann"]) == 0
    assert "cli_ann" in capsys.readouterr().out


@pytest.mark.parametrize("given", ["cli_bob", "bob"])
def test_user_means_one_user_key_everywhere(
    given: str,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("/remember bob keeps bees on the roof\n"))
    assert main(["chat", "--user", given]) == 0
    assert "PCAI terminal chat as cli_bob." in capsys.readouterr().out
    assert not (data_dir / "users" / "cli_cli_bob").exists()
    # the other commands read the same key the chat wrote under
    assert main(["search", "--user", given, "bees"]) == 0
    assert "bob keeps bees on the roof" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["chat"], ["search", "x"], ["export"]])
def test_a_user_that_is_no_key_is_refused_in_one_line(
    command: list[str], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command[0], "--user", "Bob Smith", *command[1:]]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", "pcai: not a valid user key: 'Bob Smith'\n")
    assert not (data_dir / "users").exists() or not any((data_dir / "users").iterdir())


def test_the_chat_runs_only_as_a_terminal_user(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--user", "telegram_42"]) == 2
    assert capsys.readouterr().err == (
        "pcai: the terminal chat runs as a cli_ user, not telegram_42\n"
    )
