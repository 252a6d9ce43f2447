"""``pcai doctor``: one line per check, non-zero exit when something needed is broken.

A ``warn`` line names something the operator should look at that does not stop PCAI (a
damaged ``pcai.db`` that was set aside and replaced); it does not change the exit code.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable

from bot.errors import DoctorWarning
from bot.settings import Settings

Check = tuple[str, Callable[[], str]]


def _data_dir(settings: Settings) -> str:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=settings.data_dir):
        pass
    return f"{settings.data_dir.resolve()} is writable"


def _sqlite(settings: Settings) -> str:
    from memory.db import connect, versions

    conn = connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        sqlite_v, vec_v = versions(conn)
    finally:
        conn.close()
    return f"SQLite {sqlite_v} with FTS5, sqlite-vec {vec_v}"


def _state_db(settings: Settings) -> str:
    from memory.state import set_aside_copies

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
    from memory.tokens import load_counter

    counter = load_counter()
    if counter.name == "estimate":
        raise RuntimeError("tiktoken could not load: using the fallback estimator")
    return f"{counter.name} ({counter.count('我喜歡喝咖啡 hello')} tokens in a probe)"


def _embedder(settings: Settings) -> str:
    from bot.app import build_embedder

    emb = build_embedder(settings)
    vec = emb.embed_query("doctor probe 測試")
    return f"{emb.name}, {vec.shape[0]} dimensions"


def _ollama(settings: Settings) -> str:
    from agent.ollama_client import list_models

    models = list_models(settings.ollama_host, timeout=5)
    if not any(m.split(":")[0] == settings.chat_model.split(":")[0] for m in models):
        raise RuntimeError(
            f"reachable at {settings.ollama_host} but model {settings.chat_model} is missing: "
            f"run `ollama pull {settings.chat_model}`"
        )
    return f"{settings.ollama_host}, model {settings.chat_model} present"


def _telegram(settings: Settings) -> str:
    token = settings.telegram_bot_token
    if not token:
        raise RuntimeError("TELEGRAM_BOT_TOKEN is not set (the terminal chat still works)")
    if ":" not in token or not token.split(":", 1)[0].isdigit():
        raise RuntimeError("TELEGRAM_BOT_TOKEN does not look like <digits>:<text>")
    if not settings.allowed_users:
        raise RuntimeError("PCAI_ALLOWED_USERS is empty: nobody will be served")
    return f"token set, {len(settings.allowed_users)} allowed user(s)"


def run_doctor(settings: Settings, print_fn: Callable[[str], None] = print) -> int:
    """Run every check; return 0 when all pass, 1 otherwise."""
    checks: list[Check] = [
        ("data dir", lambda: _data_dir(settings)),
        ("sqlite", lambda: _sqlite(settings)),
        ("pcai.db", lambda: _state_db(settings)),
        ("tokenizer", lambda: _tokenizer(settings)),
        ("embedder", lambda: _embedder(settings)),
        ("ollama", lambda: _ollama(settings)),
        ("telegram", lambda: _telegram(settings)),
    ]
    failed = warned = 0
    for name, check in checks:
        try:
            print_fn(f"ok    {name}: {check()}")
        except DoctorWarning as exc:
            warned += 1
            print_fn(f"warn  {name}: {exc}")
        except Exception as exc:  # every failure becomes one readable line
            failed += 1
            print_fn(f"FAIL  {name}: {exc}")
    if failed:
        print_fn(f"{failed} check(s) failed")
    else:
        print_fn("all checks passed" + (f", {warned} warning(s)" if warned else ""))
    return 1 if failed else 0
