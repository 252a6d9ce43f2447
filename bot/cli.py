"""The ``pcai`` command: run the bot, chat in a terminal, and operate on the memory store."""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agent.texts import error_both, error_text
from bot.app import Services, build_agent, build_services, hold_data_dir
from bot.settings import Settings, SettingsError, load_settings, settings_as_dict
from memory.errors import (
    DataDirBusyError,
    MemoryStoreError,
    ProposalRefusedError,
    StateSchemaError,
    StateTooNewError,
)
from memory.governance import chains_markdown, export_records
from memory.users import check_user_key

log = logging.getLogger("pcai")


def _said(exc: MemoryStoreError) -> str:
    """The terminal's line for ``exc``: what a user is told, in both languages, where there is
    such a sentence; the operator's English line otherwise."""
    if isinstance(exc, ProposalRefusedError):
        return error_both(exc)
    if isinstance(exc, DataDirBusyError):
        return f"{error_text(exc, 'en')} ({error_text(exc, 'zh')})."
    return str(exc)


def _progress(label: str) -> Any:
    def show(done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        print(f"\r{label} [{bar}] {done}/{total}", end="", file=sys.stderr, flush=True)
        if done >= total:
            print(file=sys.stderr)

    return show


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
    print(json.dumps(settings_as_dict(settings), ensure_ascii=False, indent=2))
    return 0


def cmd_remember(services: Services, args: argparse.Namespace) -> int:
    """Add a memory: proposed (the same guards as chat) and confirmed as the operator's act."""
    user, now = check_user_key(args.user), datetime.now().astimezone()
    proposal = services.confirm.propose(
        user, " ".join(args.text), "operator", section=args.section, now=now
    )
    act = services.user_acts.act(user, proposal.id, "confirm", via="operator")
    entry = services.confirm.confirm(act, now=now)
    if args.json:
        print(json.dumps({"id": entry.id, "section": entry.section}, ensure_ascii=False))
    else:
        print(f"remembered {entry.id} in section {entry.section!r}")
    return 0


def cmd_search(services: Services, args: argparse.Namespace) -> int:
    """Search a user's memory."""
    hits = services.memory.search(args.user, " ".join(args.query), args.k)
    dropped: list[dict[str, object]] = []
    if args.explain:
        # The same pipeline again, now also reporting which stage dropped which candidate.
        res = services.memory.searcher.search_explained(args.user, " ".join(args.query), args.k)
        hits = res.hits
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
        print(json.dumps(rows, ensure_ascii=False, indent=2))
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


def cmd_reindex(services: Services, args: argparse.Namespace) -> int:
    """Re-index from the Markdown."""
    stats = services.memory.reindex(args.user, progress=_progress("reindex"))
    print(f"indexed {stats.added} units from {stats.files} files, removed {stats.removed}")
    return 0


def cmd_export(services: Services, args: argparse.Namespace) -> int:
    """Print all of a user's memories."""
    entries = services.memory.entries(args.user)
    if args.format == "json":
        records = export_records(entries, services.access.get_many(args.user))
        print(json.dumps(records, ensure_ascii=False, indent=2))
    else:
        print(services.memory.export_markdown(args.user), end="")
        print(chains_markdown(entries), end="")
    return 0


def cmd_chat(services: Services, args: argparse.Namespace) -> int:
    """Chat in the terminal."""
    from bot.chat import TerminalChat
    from bot.jobs import JobRunner, scheduled
    from bot.telegram.backend import backend_for

    if services.agent is None:
        build_agent(services)
    user = args.user or _latest_cli_user(services) or _default_user()
    backend = backend_for(services, check_llm=True)
    runner = JobRunner(services, tz=services.tz)
    backend.job_status = runner.summary
    key = f"cli_{user}"
    # Only this user's files: a service may be running the jobs for everyone else.
    chat = TerminalChat(
        backend, key, jobs=lambda notify: scheduled(services, notify, runner, user_key=key)
    )
    chat.run()
    return 0


def _latest_cli_user(services: Services) -> str:
    # LoadLatestSession (seed 004 §1): the terminal resumes the most recently updated session.
    latest = services.sessions.load_latest("cli_")
    return latest.id.removeprefix("cli_") if latest is not None else ""


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    """Start the bot: Telegram when a token is set, else the terminal chat.

    The service holds the data dir's lock for its whole life: a second ``pcai run`` on the
    same data dir says so in one sentence and exits 1 instead of racing the first.
    """
    try:
        service_lock = hold_data_dir(settings)
    except DataDirBusyError as exc:
        print(f"pcai: {_said(exc)}", file=sys.stderr)
        return 1
    with service_lock:
        try:
            return _serve(settings)
        except (StateTooNewError, StateSchemaError) as exc:  # pcai.db refused, unchanged
            print(f"pcai: {exc}", file=sys.stderr)
            return 1


def _serve(settings: Settings) -> int:
    if not settings.telegram_bot_token:
        print(
            "No TELEGRAM_BOT_TOKEN set: starting the terminal chat. To connect Telegram, "
            "set TELEGRAM_BOT_TOKEN and PCAI_ALLOWED_USERS (see README).",
            file=sys.stderr,
        )
        services = _open(settings)
        try:
            return cmd_chat(services, argparse.Namespace(user=None))
        finally:
            services.close()
    from bot.jobs import JobRunner, ptb_job_setup
    from bot.telegram.application import build_application, run_polling
    from bot.telegram.backend import backend_for

    if not settings.allowed_users:
        log.warning("PCAI_ALLOWED_USERS is empty: the bot will refuse everyone")
    services = _open(settings)
    try:
        build_agent(services)
        runner = JobRunner(services, tz=services.tz)
        jobs = ptb_job_setup(services, runner)  # idle summaries, indexing, expiry, lifecycle
        backend = backend_for(services)
        backend.job_status = runner.summary
        run_polling(build_application(settings, backend, jobs=jobs))
    finally:
        services.close()
    return 0


def _default_user() -> str:
    name = "".join(ch for ch in getpass.getuser() if ch.isalnum() or ch in "_.-")
    return name or "local"


def _open(settings: Settings) -> Services:
    services = build_services(settings)
    services.memory.ensure_index(progress=_progress("building index"))
    return services


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pcai``."""
    p = argparse.ArgumentParser(prog="pcai", description="PCAI, the memory bot.")
    p.add_argument("--config", help="TOML settings file (else $PCAI_CONFIG)")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="start the bot (terminal chat without a Telegram token)")
    chat = sub.add_parser("chat", help="chat in the terminal")
    chat.add_argument("--user", help="name (default: the latest terminal session's, else yours)")
    sub.add_parser("config", help="print the effective settings")
    sub.add_parser("doctor", help="check that everything PCAI needs works")
    rem = sub.add_parser("remember", help="add a memory (checked, then confirmed)")
    rem.add_argument("--user", required=True)
    rem.add_argument("--section")
    rem.add_argument("--json", action="store_true")
    rem.add_argument("text", nargs="+")
    se = sub.add_parser("search", help="search a user's memory")
    se.add_argument("--user", required=True)
    se.add_argument("-k", type=int, default=None)
    se.add_argument("--explain", action="store_true")
    se.add_argument("--json", action="store_true")
    se.add_argument("query", nargs="+")
    ri = sub.add_parser("reindex", help="rebuild the index from the Markdown")
    ri.add_argument("--user")
    ex = sub.add_parser("export", help="print a user's memories")
    ex.add_argument("--user", required=True)
    ex.add_argument("--format", choices=("markdown", "json"), default="markdown")
    ex.add_argument("--json", dest="format", action="store_const", const="json")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pcai`` console script."""
    args = build_parser().parse_args(argv)
    try:
        from pathlib import Path

        settings = load_settings(os.environ, Path(args.config) if args.config else None)
    except SettingsError as exc:
        print(f"pcai: {exc}", file=sys.stderr)
        return 2
    level = settings.log_level.upper()
    chatting = args.command == "chat" or (
        args.command == "run" and not settings.telegram_bot_token
    )
    if chatting and level != "DEBUG":
        # A person is typing at this terminal: only problems are logged between the lines.
        level = "WARNING"
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    if args.command == "config":
        return cmd_config(settings, args)
    if args.command == "doctor":
        from bot.doctor import run_doctor

        return run_doctor(settings)
    if args.command == "run":
        return cmd_run(settings, args)
    commands = {
        "chat": cmd_chat,
        "remember": cmd_remember,
        "search": cmd_search,
        "reindex": cmd_reindex,
        "export": cmd_export,
    }
    try:
        services = _open(settings)
    except MemoryStoreError as exc:
        print(f"pcai: {_said(exc)}", file=sys.stderr)
        return 1
    try:
        return commands[args.command](services, args)
    except (MemoryStoreError, ValueError) as exc:
        print(f"pcai: {_said(exc) if isinstance(exc, MemoryStoreError) else exc}", file=sys.stderr)
        return 1
    finally:
        services.close()


if __name__ == "__main__":
    sys.exit(main())
