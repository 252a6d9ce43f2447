"""The ``pcai`` command: run the bot, chat in a terminal, and operate on the memory store.

Errors are one line on stderr (``pcai: …``); the exit codes are ``cli_parser.EXIT_CODES``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.texts import error_text
from bot.app import Services, hold_data_dir
from bot.cli_parser import build_parser
from bot.model_context import ContextTooSmallError
from bot.schema import MIGRATIONS_ALL
from bot.serve import chat, open_services, progress_bar, serve
from bot.settings import (
    Settings,
    SettingsError,
    load_settings,
    settings_as_dict,
    unknown_variables,
)
from bot.user_pick import UserNotChosenError, pick_user, user_key_of
from memory.base.users import check_user_key
from memory.errors import (
    DataDirBusyError,
    InvalidUserKeyError,
    MemoryStoreError,
    ProposalRefusedError,
    StateSchemaError,
    StateTooNewError,
)

if TYPE_CHECKING:
    from agent.forget import Forgetter
    from memory.api import Memory

log = logging.getLogger("pcai")
_DEBUG_HINT = "PCAI_LOG_LEVEL=DEBUG shows where"


class UsageError(Exception):
    """The command line asks for something that cannot be done as given (exit code 2)."""


def print_json(data: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
    """What ``--json`` prints: one object on one line, or a list as JSON lines."""
    rows = [data] if isinstance(data, Mapping) else data
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))


def _said(exc: MemoryStoreError) -> str:
    """The terminal's line for ``exc``: the catalogue's sentence where there is one, else the
    error's own line; English, as every ``pcai`` line (one language per line)."""
    if isinstance(exc, (ProposalRefusedError, DataDirBusyError)):
        return error_text(exc, "en")
    return str(exc)


def _hit_dict(hit: Any, explain: bool) -> dict[str, Any]:
    c = hit.chunk
    out: dict[str, Any] = {
        "score": round(hit.score, 6),
        "text": c.text,
        "user_key": c.user_key,
        "kind": c.kind,
        "path": c.path,
        "section": c.section,
        "date": c.date,
        "id": c.unit_id,
        "refs": list(c.refs),
        "lines": [c.line_start, c.line_end],
    }
    if explain:
        out["explain"] = {k: round(v, 6) for k, v in hit.stages.items()}
        out["vector_similarity"] = hit.vector_similarity
        out["bm25_rank"] = hit.bm25_rank
    return out


def cmd_config(settings: Settings, args: argparse.Namespace) -> int:
    """Print the effective settings with secrets masked."""
    if args.json:
        print_json(settings_as_dict(settings))
    else:
        print(json.dumps(settings_as_dict(settings), ensure_ascii=False, indent=2))
    return 0


def cmd_remember(library: Memory, forgetter: Forgetter, args: argparse.Namespace) -> int:
    """Add a memory: proposed (the same guards as chat) and confirmed as the operator's act."""
    user = check_user_key(args.user)
    entry = library.remember(user, " ".join(args.text), section=args.section)
    # The person's act, like a typed /remember: their next /undo (within the window) takes it back.
    forgetter.note_made(user, f"memory:{entry.id}")
    if args.json:
        print_json({"id": entry.id, "section": entry.section})
    else:
        print(f"remembered {entry.id} in section {entry.section!r}")
    return 0


def cmd_search(library: Memory, args: argparse.Namespace) -> int:
    """Search a user's memory."""
    query = " ".join(args.query).strip()
    if not query:
        raise ValueError("the query is empty: say what to look for")
    # One run: --explain reports the same run's stage scores and dropped candidates.
    res = library.search(args.user, query, args.k, explain=True)
    hits = res.hits
    dropped: list[dict[str, object]] = []
    if args.explain:
        dropped = [
            {
                "stage": d.stage,
                "reason": d.reason,
                "score": round(d.score, 6),
                "id": d.chunk.unit_id,
                "text": d.chunk.text[:80],
            }
            for d in res.dropped
        ]
    rows = [_hit_dict(h, args.explain) for h in hits]
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no results")
    for i, row in enumerate(rows, start=1):
        print(f"{i}. [{row['score']:.3f}] {row['text']}")
        print(f"   {row['kind']} {row['path']} {row['section']} {row['date']} id={row['id']}")
        if args.explain:
            stages = " -> ".join(f"{k} {v:.3f}" for k, v in row["explain"].items())
            print(f"   {stages}")
    for d in dropped:
        print(f"   dropped at {d['stage']} ({d['reason']}, {d['score']}): {d['id']} {d['text']}")
    return 0


def cmd_reindex(library: Memory, args: argparse.Namespace) -> int:
    """Re-index from the Markdown."""
    with progress_bar("reindex") as bar:
        stats = library.reindex(args.user, progress=bar)
    if args.json:
        print_json({"added": stats.added, "files": stats.files, "removed": stats.removed})
    else:
        print(f"indexed {stats.added} units from {stats.files} files, removed {stats.removed}")
    return 0


def cmd_export(services: Services, args: argparse.Namespace) -> int:
    """Print all of a user's memories."""
    if args.json:  # JSON lines, one record each
        print_json(json.loads(services.library.export(args.user, "json")))
    else:  # markdown, or the backup format: one JSON document
        print(services.library.export(args.user, args.format), end="")
    return 0


def cmd_web_link(settings: Settings, args: argparse.Namespace) -> int:
    """Print a one-time login link to the memory page (pcai.db is shared with the service)."""
    from bot.web.logins import LoginStore
    from bot.web.running import issue_link, running_page_url
    from memory.base.locks import service_holds
    from memory.state.statedb import StateDB

    if not settings.web.enabled:
        raise ValueError("the memory page is off (PCAI_WEB_ENABLED=false)")
    user = check_user_key(args.user)
    # The link is to the page the running bot serves, never to our own settings' port.
    if not service_holds(settings.data_dir):
        raise ValueError(f"no pcai run serves {settings.data_dir}: start it, then ask again")
    base = running_page_url(settings.data_dir)
    if base is None:
        raise ValueError("the running pcai serves no memory page (its log says why)")
    state = StateDB(settings.state_db_path, MIGRATIONS_ALL)
    try:
        url = issue_link(LoginStore(state), base, user)
    finally:
        state.close()
    if args.json:
        print_json({"user_key": user, "url": url, "valid_minutes": 10})
    else:
        print(url)
        print("valid once, for 10 minutes", file=sys.stderr)
    return 0


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    """Start the bot: Telegram when a token is set, else the terminal chat.

    The service holds the data dir's lock for its whole life: a second ``pcai run`` on the
    same data dir says so in one sentence and exits 1 instead of racing the first.
    """
    try:
        service_lock = hold_data_dir(settings)
    except DataDirBusyError as exc:
        return _fail(exc)
    with service_lock:
        try:
            return serve(settings, getattr(args, "user", None))
        except (StateTooNewError, StateSchemaError, ContextTooSmallError) as exc:
            return _fail(exc)  # pcai.db refused, unchanged; or a model context too small


def _find_model(settings: Settings, args: argparse.Namespace) -> Settings:
    """The model server the settings name, else the one running here, said in one line.

    None running: Telegram's operator reads the sentence naming what to start here; the
    terminal chat says it itself, in its reader's language.
    """
    from bot.model_discovery import discover

    found = discover(settings)
    telegram = args.command == "run" and bool(settings.telegram_bot_token)
    if found.line and (found.found is not None or telegram):
        print(found.line, file=sys.stderr)
    return found.settings


def data_dir_problem(data_dir: Path) -> str:
    """One sentence when the data dir exists but cannot be written (read-only), else ""."""
    if not data_dir.is_dir() or os.access(data_dir, os.W_OK):
        return ""
    return (
        f"the data dir {data_dir} cannot be written (read-only file system or no permission); "
        "PCAI needs to write there: make it writable or set PCAI_DATA_DIR to another folder"
    )


def _fail(problem: object, code: int = 1) -> int:
    """Say what went wrong in one line on stderr and return the exit code."""
    said = _said(problem) if isinstance(problem, MemoryStoreError) else str(problem)
    print(f"pcai: {' '.join(said.split())}", file=sys.stderr)
    return code


def _setup_logging(settings: Settings, args: argparse.Namespace) -> None:
    level = settings.log_level.upper()
    serving = args.command == "run" and bool(settings.telegram_bot_token)
    if not serving and level != "DEBUG":
        # A person is at this terminal (chatting, or reading a command's output and its
        # one-line error): only problems are logged.
        level = "WARNING"
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)


def _resolve_user(args: argparse.Namespace, settings: Settings) -> None:
    """Who the command acts as, by one rule (bot/user_pick.py): ``--user``, else
    ``PCAI_USER``, else the only user there is; reindex without ``--user`` is everyone's."""
    terminal = args.command == "chat" or (
        args.command == "run" and not settings.telegram_bot_token
    )
    if terminal:  # PCAI_USER when it is a terminal user; else the only terminal user
        pcai_user = user_key_of(settings.user) if settings.user else ""
        named = getattr(args, "user", None) or (pcai_user if pcai_user.startswith("cli_") else "")
        args.user = pick_user(args.command, named, settings.data_dir, terminal=True) or None
    elif args.command in ("remember", "search", "export", "web-link"):
        args.user = pick_user(args.command, args.user or settings.user, settings.data_dir)
    elif getattr(args, "user", None):
        args.user = user_key_of(args.user)
    if terminal and args.user and not args.user.startswith("cli_"):
        # Another front end's user: its reminders and jobs belong to the service.
        raise UsageError(f"the terminal chat runs as a cli_ user, not {args.user}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pcai`` console script; returns the exit code (see EXIT_CODES)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already said in one line
        return exc.code if isinstance(exc.code, int) else 2
    try:
        settings = load_settings(os.environ, Path(args.config) if args.config else None)
        _resolve_user(args, settings)
    except (SettingsError, UsageError, UserNotChosenError) as exc:
        return _fail(exc, 2)
    except InvalidUserKeyError as exc:
        return _fail(exc)
    if args.command == "restore" and args.data:  # the folder to fill, for this command only
        settings = dataclasses.replace(settings, data_dir=Path(args.data).expanduser())
    _setup_logging(settings, args)
    for warning in unknown_variables(os.environ):
        print(f"pcai: warning: {warning}", file=sys.stderr)
    if args.command not in ("config", "doctor", "backup") and not settings.data_dir.exists():
        # Said once, when it happens: a mistyped PCAI_DATA_DIR shows here, not as "no results".
        try:
            settings.data_dir.mkdir(parents=True)
        except FileExistsError:  # another command made it at the same moment: use it
            if not settings.data_dir.is_dir():
                return _fail(f"{settings.data_dir} is a file, not a folder")
        except OSError as exc:
            return _fail(exc)
        else:
            print(
                f"New data folder: {settings.data_dir} (PCAI_DATA_DIR sets another)",
                file=sys.stderr,
            )
    try:
        code = _dispatch(settings, args)
        sys.stdout.flush()  # inside the try: a reader gone shows here, not at exit
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return _reader_left()
    return code


def _reader_left() -> int:
    """The reader of our output left (``| head``): stop quietly, exit 0, as other CLIs do.

    Python would print "Exception ignored ... BrokenPipeError" when it flushes stdout at exit;
    pointing stdout at /dev/null first leaves nothing to flush (the recipe in Python's
    ``signal`` documentation).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def _backup_command(settings: Settings, args: argparse.Namespace) -> int:
    """``pcai backup`` (reads the data folder, even a read-only one) and ``pcai restore``."""
    from bot.backup import BackupError
    from bot.backup.commands import cmd_backup, cmd_restore

    try:
        if args.command == "backup":
            return cmd_backup(settings, args)
        if problem := data_dir_problem(Path(settings.data_dir)):
            return _fail(problem)
        return cmd_restore(settings, args)
    except BackupError as exc:
        return _fail(exc, exc.exit_code)
    except (MemoryStoreError, OSError) as exc:
        return _fail(exc)


def _dispatch(settings: Settings, args: argparse.Namespace) -> int:
    if args.command == "config":
        return cmd_config(settings, args)
    if args.command == "doctor":
        from bot.doctor import run_doctor

        return run_doctor(settings, as_json=args.json)
    if args.command in ("backup", "restore"):
        return _backup_command(settings, args)
    if problem := data_dir_problem(Path(settings.data_dir)):
        return _fail(problem)  # every other command writes there (pcai.db's WAL, the lock)
    if args.command in ("run", "chat"):
        settings = _find_model(settings, args)
    if args.command == "run":
        return cmd_run(settings, args)
    if args.command == "web-link":
        try:
            return cmd_web_link(settings, args)
        except BrokenPipeError:
            raise
        except (MemoryStoreError, ValueError, OSError) as exc:
            return _fail(exc)
    try:
        services = open_services(settings)
    except (MemoryStoreError, OSError) as exc:
        return _fail(exc)
    # The bag stops here: each command gets the services it uses (export: its tests' door).
    library = services.library
    commands: dict[str, Callable[[], int]] = {
        # the terminal chat as --user (else the latest terminal user, else the login)
        "chat": lambda: chat(services, args.user),
        "remember": lambda: cmd_remember(library, services.forgetter, args),
        "search": lambda: cmd_search(library, args),
        "reindex": lambda: cmd_reindex(library, args),
        "export": lambda: cmd_export(services, args),
    }
    try:
        return commands[args.command]()
    except BrokenPipeError:
        raise  # the reader left: main() stops quietly
    except (MemoryStoreError, ValueError, OSError) as exc:
        return _fail(exc)
    except Exception as exc:  # a bug of ours: one line, not a traceback on the terminal
        log.debug("pcai %s failed", args.command, exc_info=True)
        name = type(exc).__name__
        return _fail(f"{args.command} stopped on an error of ours ({name}); {_DEBUG_HINT}")
    finally:
        services.close()


if __name__ == "__main__":
    sys.exit(main())
