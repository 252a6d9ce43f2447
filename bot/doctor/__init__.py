"""``pcai doctor``: one line per check, non-zero exit when something needed is broken.

A ``warn`` line names something the operator should look at that does not stop PCAI (a
damaged ``pcai.db`` that was set aside and replaced); a ``skip`` line, a part this install
does not use (Telegram without a token: the terminal chat needs none). Neither changes the
exit code: only a ``FAIL`` does.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass

from bot.doctor.model import ModelChecks, ModelSkip
from bot.doctor.page import PageSkip, check_page
from bot.errors import DoctorWarning
from bot.settings import Settings

Check = tuple[str, Callable[[], str]]


class DoctorSkip(Exception):
    """A check does not apply to this install."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one check."""

    check: str
    status: str  # "ok", "warn", "skip" or "fail"
    detail: str


def _data_dir(settings: Settings) -> str:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=settings.data_dir):
        pass
    return f"{settings.data_dir.resolve()} is writable"


def _sqlite(settings: Settings) -> str:
    from memory.base.db import connect, versions

    conn = connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        sqlite_v, vec_v = versions(conn)
    finally:
        conn.close()
    return f"SQLite {sqlite_v} with FTS5, sqlite-vec {vec_v}"


def _state_db(settings: Settings) -> str:
    from memory.state.statedb import set_aside_copies

    path = settings.state_db_path
    kept = set_aside_copies(path)
    if kept:
        raise DoctorWarning(
            f"a damaged {path.name} was set aside as {kept[-1].name} ({len(kept)} so far) and "
            "replaced by an empty one: the pending proposals, /why records and access counters "
            "it held are lost (see the log); delete the copy once you have looked at it"
        )
    if not path.exists():
        return f"{path.name} not created yet"
    with path.open("rb") as fh:
        head = fh.read(16)
    if head and head != b"SQLite format 3\x00":
        raise RuntimeError(
            f"{path} is not an SQLite database: the next start sets it aside and starts empty"
        )
    return f"{path.name} is an SQLite database"


def _tokenizer(settings: Settings) -> str:
    from memory.base.tokens import load_counter

    counter = load_counter()
    if counter.name == "estimate":
        raise RuntimeError("tiktoken could not load: using the fallback estimator")
    return f"{counter.name} ({counter.count('我喜歡喝咖啡 hello')} tokens in a probe)"


def _embedder(settings: Settings) -> str:
    from bot.app import build_embedder

    emb = build_embedder(settings)
    vec = emb.embed_query("doctor probe 測試")
    return f"{emb.name}, {vec.shape[0]} dimensions"


def _telegram(settings: Settings) -> str:
    token = settings.telegram_bot_token
    if not token:
        raise DoctorSkip("TELEGRAM_BOT_TOKEN is not set: a terminal-only install")
    if ":" not in token or not token.split(":", 1)[0].isdigit():
        raise RuntimeError("TELEGRAM_BOT_TOKEN does not look like <digits>:<text>")
    if not settings.allowed_users:
        raise RuntimeError("PCAI_ALLOWED_USERS is empty: nobody will be served")
    return f"token set, {len(settings.allowed_users)} allowed user(s)"


def run_checks(settings: Settings) -> list[CheckResult]:
    """Run every check in order; a check that raises becomes one readable result."""
    from bot.model_discovery import discover

    found = discover(settings)  # the server `pcai run` would use, found as it finds it
    model = ModelChecks(found.settings, found.found)
    checks: list[Check] = [
        ("data dir", lambda: _data_dir(settings)),
        ("sqlite", lambda: _sqlite(settings)),
        ("pcai.db", lambda: _state_db(settings)),
        ("tokenizer", lambda: _tokenizer(settings)),
        ("embedder", lambda: _embedder(settings)),
        ("model server", model.server),
        ("context", model.context),
        ("tools", model.tools),
        ("memory page", lambda: check_page(settings)),
        ("telegram", lambda: _telegram(settings)),
    ]
    if settings.backup.dir:  # only where backups are on
        from bot.doctor.backup import check_backup

        checks.append(("backup", lambda: check_backup(settings)))
    results = []
    for name, check in checks:
        try:
            results.append(CheckResult(name, "ok", check()))
        except DoctorWarning as exc:
            results.append(CheckResult(name, "warn", str(exc)))
        except (DoctorSkip, ModelSkip, PageSkip) as exc:
            results.append(CheckResult(name, "skip", str(exc)))
        except Exception as exc:  # every failure becomes one readable line
            results.append(CheckResult(name, "fail", " ".join(str(exc).split())))
    return results


def run_doctor(
    settings: Settings, print_fn: Callable[[str], None] = print, *, as_json: bool = False
) -> int:
    """Run every check and print one line each; return 1 when one failed, else 0.

    ``as_json``: JSON lines, one ``{"check", "status", "detail"}`` object per check and no
    summary line (the exit code is the summary).
    """
    results = run_checks(settings)
    if as_json:
        for r in results:
            print_fn(json.dumps(asdict(r), ensure_ascii=False))
    else:
        for r in results:
            label = "FAIL" if r.status == "fail" else r.status  # a failure should stand out
            print_fn(f"{label:<6}{r.check}: {r.detail}")
        print_fn(_summary(Counter(r.status for r in results)))
    return 1 if any(r.status == "fail" for r in results) else 0


def _summary(count: Counter[str]) -> str:
    if count["fail"]:
        return f"{count['fail']} check(s) failed"
    notes = [
        f"{count['warn']} warning(s)" if count["warn"] else "",
        f"{count['skip']} skipped" if count["skip"] else "",
    ]
    return ", ".join(["all checks passed", *filter(None, notes)])
