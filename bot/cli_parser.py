"""The ``pcai`` argument parser: every command and option with its help, examples and errors."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from bot.user_pick import RULE

# What `pcai --help` ends with; the README's exit-code table says the same.
EXIT_CODES = """\
exit codes:
  0    done (doctor: no check failed; warn and skip lines do not count); also when
       the reader of the output leaves early (pcai config | head)
  1    user error: bad input (user key, query, refused memory), a data dir another
       pcai holds, unreadable data; doctor: a check failed
  2    usage error: unknown command or option, missing argument, bad setting or
       config file
  130  interrupted (Ctrl-C)
"""

ROOT_EPILOG = f"""\
examples:
  pcai run                              start the bot (terminal chat without a token)
  pcai doctor                           check that everything PCAI needs works
  pcai search --user cli_alice coffee   search cli_alice's memories
  PCAI_USER=cli_alice pcai search tea   the same, the user taken from the environment
  pcai search --help                    a command's options and examples

environment:
  PCAI_USER       user key of the commands that take --user (e.g. cli_alice); without
                  --user or PCAI_USER they act as the only user in the data folder, and
                  with several they say so and list them
  PCAI_CONFIG     TOML settings file (what --config sets)
  PCAI_DATA_DIR   where the Markdown, sessions and index live
                  (default: $XDG_DATA_HOME/pcai, else ~/.local/share/pcai)
  every other setting: `pcai config`, and the README's settings table

errors are one line on stderr, starting "pcai: ".

{EXIT_CODES}"""

USER_HELP = f"user key, e.g. cli_alice or telegram_42; a bare name is cli_NAME ({RULE})"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        """Say what is wrong in one line and where the help is."""
        self.exit(2, f"pcai: {message} (see '{self.prog} --help')\n")


def package_version() -> str:
    """The installed package's version (``pyproject.toml``'s, once installed)."""
    try:
        return version("pcai")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed: pip install -e .)"


def add_output_options(parser: argparse.ArgumentParser, *, many: bool) -> None:
    """Give a command that prints data the ``--json`` flag every such command shares.

    ``many``: the command prints a list, written as JSON lines (one object per line, so a
    script can read it line by line); otherwise one JSON object on one line.
    """
    shape = "JSON lines, one object per line" if many else "one JSON object on one line"
    parser.add_argument("--json", action="store_true", help=f"machine-readable output: {shape}")


def _positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of 1 or more, not {raw!r}")
    return value


def _command(
    sub: argparse._SubParsersAction[Parser], name: str, summary: str, about: str, examples: str
) -> Parser:
    return sub.add_parser(
        name,
        help=summary,
        description=about,
        epilog=f"examples:\n{examples}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _user_option(parser: Parser) -> None:
    parser.add_argument("--user", metavar="KEY", help=USER_HELP)


def build_parser() -> Parser:
    """The argument parser of ``pcai``."""
    p = Parser(
        prog="pcai",
        description="PCAI, the memory bot: run it, chat in a terminal, look after its memory.",
        epilog=ROOT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", metavar="FILE", help="TOML settings file (default: $PCAI_CONFIG)")
    p.add_argument(
        "--version",
        action="version",
        version=f"pcai {package_version()}",
        help="print the version and exit",
    )
    sub = p.add_subparsers(
        dest="command",
        metavar="COMMAND",
        required=True,
        help="what to do (`pcai COMMAND --help` shows its options and examples)",
    )

    _command(
        sub,
        "run",
        "start the bot (the terminal chat without a Telegram token)",
        "Start the bot: on Telegram when TELEGRAM_BOT_TOKEN is set, else the terminal chat.\n"
        "It holds the data dir until it stops: a second `pcai run` on it exits 1.",
        "  pcai run\n  TELEGRAM_BOT_TOKEN=123456:ABC PCAI_ALLOWED_USERS=111111111 pcai run\n",
    )

    chat = _command(
        sub,
        "chat",
        "chat in the terminal",
        "Chat in the terminal as a user (type /help inside for the commands).",
        "  pcai chat                     chat as the only terminal user there is\n"
        "  pcai chat --user cli_alice    chat as cli_alice (--user alice is the same)\n",
    )
    chat.add_argument(
        "--user",
        metavar="KEY",
        help="user key, e.g. cli_alice; a bare name is cli_NAME (default: $PCAI_USER, else "
        "the only cli_ user in the data folder, else a new cli_ and your login name; several "
        "cli_ users: an error lists them)",
    )

    config = _command(
        sub,
        "config",
        "print the effective settings (secrets masked)",
        "Print the settings in effect (defaults < config file < environment), with the\n"
        "Telegram token masked. The output is JSON either way; --json puts it on one line.",
        "  pcai config\n  pcai config --json | jq .retrieval\n",
    )
    add_output_options(config, many=False)

    doctor = _command(
        sub,
        "doctor",
        "check that everything PCAI needs works",
        "Check the data dir, SQLite, pcai.db, the tokenizer, the embedder, Ollama and\n"
        "Telegram: one line each, ok / warn / skip / FAIL. Exits 1 when a check failed;\n"
        "Telegram is skipped without a token (a terminal-only install exits 0).",
        "  pcai doctor\n  pcai doctor --json | jq -c 'select(.status == \"fail\")'\n",
    )
    add_output_options(doctor, many=True)

    rem = _command(
        sub,
        "remember",
        "add a memory (checked like a chat proposal, then confirmed)",
        "Add a memory for a user: the same checks as a proposal in the chat (secrets,\n"
        "small talk, duplicates), then confirmed as the operator's act.",
        "  pcai remember --user cli_alice 我每天早上都喝咖啡\n"
        "  pcai remember --user cli_alice --section 偏好 --json I prefer window seats\n",
    )
    _user_option(rem)
    rem.add_argument("--section", help="MEMORY.md section to add it to (default: guessed)")
    add_output_options(rem, many=False)
    rem.add_argument("text", nargs="+", help="what to remember (the words are joined)")

    se = _command(
        sub,
        "search",
        "search a user's memory",
        "Search a user's memory the way the bot does before answering (hybrid BM25 and\n"
        "vector search, then the scoring stages).",
        "  pcai search --user cli_alice 咖啡\n"
        "  pcai search --user cli_alice -k 3 --explain what beans should I buy\n"
        "  PCAI_USER=cli_alice pcai search --json coffee | jq -r .text\n",
    )
    _user_option(se)
    se.add_argument(
        "-k",
        type=_positive_int,
        metavar="N",
        help="at most N results (default: the setting PCAI_RETRIEVAL_TOP_K)",
    )
    se.add_argument(
        "--explain",
        action="store_true",
        help="show each result's score after every stage and what was dropped where",
    )
    add_output_options(se, many=True)
    se.add_argument("query", nargs="+", help="what to look for (the words are joined)")

    ri = _command(
        sub,
        "reindex",
        "rebuild the index from the Markdown",
        "Read the Markdown files again and bring the search index in line with them\n"
        "(unchanged text is not embedded again). Progress goes to stderr.",
        "  pcai reindex\n  pcai reindex --user cli_alice --json\n",
    )
    ri.add_argument(
        "--user",
        metavar="KEY",
        help="only this user's files, a user key as everywhere (default: every user; "
        "$PCAI_USER does not apply)",
    )
    add_output_options(ri, many=False)

    ex = _command(
        sub,
        "export",
        "print a user's memories",
        "Print all of a user's memories: Markdown (their MEMORY.md and how each topic\n"
        "changed), or JSON with every governance field.",
        "  pcai export --user cli_alice > alice.md\n"
        "  pcai export --user cli_alice --format json > alice.json\n"
        "  pcai export --user cli_alice --json | jq -r 'select(.status == \"active\") | .text'\n",
    )
    _user_option(ex)
    ex.add_argument(
        "--format",
        choices=("markdown", "json"),
        default="markdown",
        help="markdown (default) or json: one JSON array, the backup format",
    )
    add_output_options(ex, many=True)

    web = _command(
        sub,
        "web-link",
        "print a one-time login link to a user's memory page",
        "Print a login link to the memory page that `pcai run` serves (works while it\n"
        "runs). The link opens once, within 10 minutes; in Telegram, /web does the same.",
        "  pcai web-link --user cli_alice\n  PCAI_USER=cli_alice pcai web-link --json\n",
    )
    _user_option(web)
    add_output_options(web, many=False)
    _backup_commands(sub)
    return p


def _backup_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    backup = _command(
        sub,
        "backup",
        "write a consistent snapshot of the data folder (while the bot runs)",
        "Write one snapshot of the data folder into DIR, also while `pcai run` serves:\n"
        "pcai.db through SQLite's backup API, every user's Markdown and the sessions taken\n"
        "under the writers' own locks, and a manifest with checksums. The search index is\n"
        "left out (restore rebuilds it). --verify checks a snapshot against its manifest.",
        "  pcai backup /srv/backups/pcai\n"
        "  PCAI_BACKUP_DIR=/srv/backups/pcai pcai backup\n"
        "  pcai backup --verify /srv/backups/pcai/pcai-backup-20261122T030000Z\n",
    )
    backup.add_argument(
        "dir", nargs="?", metavar="DIR", help="folder the snapshot goes into ($PCAI_BACKUP_DIR)"
    )
    backup.add_argument(
        "--verify", metavar="SNAPSHOT", help="check SNAPSHOT against its manifest instead"
    )
    add_output_options(backup, many=False)
    restore = _command(
        sub,
        "restore",
        "fill an empty data folder from a snapshot and rebuild the index",
        "Check SNAPSHOT, copy it into an empty data folder (a folder that holds anything is\n"
        "refused, untouched), then rebuild the search index from the Markdown (progress bar).",
        "  pcai restore /srv/backups/pcai/pcai-backup-20261122T030000Z\n"
        "  pcai restore SNAPSHOT --data /var/lib/pcai-new\n",
    )
    restore.add_argument(
        "snapshot", metavar="SNAPSHOT", help="a snapshot folder `pcai backup` wrote"
    )
    restore.add_argument(
        "--data", metavar="DIR", help="the empty data folder to fill (default: PCAI_DATA_DIR)"
    )
    add_output_options(restore, many=False)
