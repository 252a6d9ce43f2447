"""The layering the README's "Layout" promises: imports flow bot -> agent -> {memory, history}.

Read from the source with ``ast``, so a new module that imports the wrong way fails here, and
so does one that reaches for Telegram or Ollama outside the one place allowed to.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "agent", "memory", "history")
# What each package may import of the project's own packages.
MAY_IMPORT = {
    "bot": {"bot", "agent", "memory", "history"},
    "agent": {"agent", "memory", "history"},
    "history": {"history", "memory"},
    "memory": {"memory"},
}
# Outside SDKs, and the only modules allowed to import them. The benchmark of reminder
# scheduling times python-telegram-bot's own JobQueue, so it needs the real one.
SDK_OWNERS = {
    "telegram": ("bot/telegram/", "bench/reminders.py"),
    "ollama": ("agent/ollama_client.py",),
}
TELEGRAM_PACKAGE = "bot/telegram"
# No line cap: files split by meaning, not size (docs/architecture.md, "The map").


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_flow_one_way(package: str) -> None:
    modules = _modules(package)
    assert modules, package
    wrong = {
        str(path.relative_to(ROOT)): name
        for path in modules
        for name in _imports(path)
        if name.split(".")[0] in PACKAGES and name.split(".")[0] not in MAY_IMPORT[package]
    }
    assert wrong == {}


@pytest.mark.parametrize("sdk", sorted(SDK_OWNERS))
def test_only_the_adapter_imports_an_outside_sdk(sdk: str) -> None:
    owners = SDK_OWNERS[sdk]
    wrong = [
        str(path.relative_to(ROOT))
        for package in (*PACKAGES, "bench")
        for path in _modules(package)
        if any(name.split(".")[0] == sdk for name in _imports(path))
        and not str(path.relative_to(ROOT)).startswith(owners)
    ]
    assert wrong == []


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from bot.app import Services\nimport telegram\n", encoding="utf-8")
    assert _imports(bad) == ["bot.app", "telegram"]


def test_every_telegram_module_is_telegram_code() -> None:
    # bot/telegram/ holds only what speaks python-telegram-bot; what the terminal chat shares
    # (the desk, ports, backend, texts) lives in bot/frontdesk/ and imports no Telegram code.
    modules = [p for p in _modules(TELEGRAM_PACKAGE) if p.name != "__init__.py"]
    assert len(modules) >= 5
    free = [
        str(path.relative_to(ROOT))
        for path in modules
        if not any(name.split(".")[0] == "telegram" for name in _imports(path))
    ]
    assert not free, f"import no Telegram code, so they belong outside bot/telegram/: {free}"


def test_the_checker_sees_a_telegram_free_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bot" / "telegram").mkdir(parents=True)
    (tmp_path / "bot" / "telegram" / "plain.py").write_text("import json\n", encoding="utf-8")
    for i in range(5):
        (tmp_path / "bot" / "telegram" / f"tg{i}.py").write_text(
            "import telegram\n", encoding="utf-8"
        )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"bot/telegram/plain\.py"):
        test_every_telegram_module_is_telegram_code()


# memory/'s sub-packages and which others each may import (besides itself, memory.errors and
# memory.config, which import nothing of memory). The order is the DAG's: each row names only
# rows above it. memory/api.py (the front door) and memory/__init__.py may import them all.
MEMORY_SUBPACKAGES = {
    "base": set(),
    "index": {"base"},
    "state": {"base"},
    "search": {"base", "index", "state"},
    "store": {"base", "index", "search"},
    "write": {"base", "index", "state", "search", "store"},
}
MEMORY_LEAVES = ("memory.errors", "memory.config")
# What history/ may import of memory: the neutral sub-package and the front door (the package
# itself, and its one errors module whose base class the front door exports).
HISTORY_MAY_USE = ("memory.base", "memory.errors", "memory")


def _targets(path: Path, root: Path) -> list[str]:
    """Every project module ``path`` imports, resolved (relative and ``from pkg import mod``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = list(path.relative_to(root).with_suffix("").parts[:-1])
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            for alias in node.names:
                sub = root.joinpath(*module.split("."), alias.name)
                is_module = sub.is_dir() or sub.with_suffix(".py").is_file()
                found.append(f"{module}.{alias.name}" if is_module else module)
    return found


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _wrong_memory_imports(root: Path) -> dict[str, list[str]]:
    """Imports inside memory/ that break the sub-package table, by importing file."""
    wrong: dict[str, list[str]] = {}
    for path in sorted((root / "memory").rglob("*.py")):
        parts = path.relative_to(root / "memory").parts
        if len(parts) > 1:
            allowed = [f"memory.{p}" for p in {parts[0], *MEMORY_SUBPACKAGES.get(parts[0], ())}]
            allowed += MEMORY_LEAVES
        elif f"memory.{path.stem}" in MEMORY_LEAVES:
            allowed = []
        else:
            continue  # the front door (api.py, __init__.py) may use every sub-package
        bad = [
            name
            for name in _targets(path, root)
            if _within(name, "memory") and not any(_within(name, a) for a in allowed)
        ]
        if bad:
            wrong[str(path.relative_to(root))] = bad
    return wrong


def test_memory_subpackages_import_down_the_table_only() -> None:
    assert _wrong_memory_imports(ROOT) == {}


def test_the_memory_table_is_a_dag_and_names_every_subpackage() -> None:
    on_disk = {p.parent.name for p in (ROOT / "memory").glob("*/__init__.py")}
    assert on_disk == set(MEMORY_SUBPACKAGES)
    seen: set[str] = set()
    for name, uses in MEMORY_SUBPACKAGES.items():  # each row uses only rows above it
        assert uses <= seen, name
        seen.add(name)


def test_history_uses_only_memorys_neutral_subpackage_and_front_door() -> None:
    wrong = {
        str(path.relative_to(ROOT)): name
        for path in _modules("history")
        for name in _targets(path, ROOT)
        if _within(name, "memory")
        and not any(
            name == "memory" if a == "memory" else _within(name, a) for a in HISTORY_MAY_USE
        )
    }
    assert wrong == {}


def test_the_memory_checker_sees_an_upward_import(tmp_path: Path) -> None:
    for sub in ("base", "write"):
        (tmp_path / "memory" / sub).mkdir(parents=True)
        (tmp_path / "memory" / sub / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "memory" / "write" / "governance.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "memory" / "base" / "bad.py").write_text(
        "from memory.write.governance import X\nfrom ..write import governance\n"
        "from memory import write\nfrom memory.errors import MemoryStoreError\n",
        encoding="utf-8",
    )
    assert _wrong_memory_imports(tmp_path) == {
        "memory/base/bad.py": [
            "memory.write.governance",
            "memory.write.governance",
            "memory.write",
        ]
    }


# issue 29 part B: reminders live in one wing, agent/reminders/. Its store (the rows of
# pcai.db's reminder tables) is read and written only through the wing; outside it only the
# wiring builds one: the composition root and the bench that stands in for it.
REMINDER_WING = "agent/reminders/"
REMINDER_STORE = ("agent.reminders.store", "agent.reminders.users")
REMINDER_WIRING = ("bot/app.py", "bench/reminders.py")


def _store_imports(path: Path) -> list[str]:
    """The reminder-store modules ``path`` imports (``from agent.reminders import store`` too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [n for n in names if n in REMINDER_STORE]
    return found


def test_only_the_reminder_wing_and_the_wiring_import_the_reminder_store() -> None:
    outside = {
        rel: names
        for package in (*PACKAGES, "bench")
        for path in _modules(package)
        if not (rel := str(path.relative_to(ROOT))).startswith(REMINDER_WING)
        and rel not in REMINDER_WIRING
        and (names := _store_imports(path))
    }
    assert outside == {}, f"use agent/reminders' service or types, not its store: {outside}"


def test_the_reminder_store_checker_sees_both_import_forms(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from agent.reminders import store as rs\nimport agent.reminders.users\n"
        "from agent.reminders.types import Reminder\n",
        encoding="utf-8",
    )
    assert _store_imports(bad) == ["agent.reminders.store", "agent.reminders.users"]
    assert not (ROOT / "memory/state/reminders.py").exists()


# issue 29 part C: one front desk. A typed line is routed by bot/frontdesk/steps.py's ordered
# steps; Telegram and the terminal build a Line, call run_line, and differ only in transport.
FRONT_ENDS = ("bot/chat.py", "bot/telegram/messages.py")
FRONT_DESK = "bot/frontdesk/steps.py"
# The steps' module, and the backend adapter that passes a lookup on to its service.
MAY_ROUTE = (FRONT_DESK, "bot/frontdesk/backend.py")
# What routing a line takes: reading a yes / no, matching a reply, answering a bare word.
ROUTING_CALLS = {"classify", "answer_word", "tied", "proposal_for_message"}
# The old per-front-end chains and "last shown" state, gone since the desk keeps them once.
OLD_NAMES = {"try_reminder_reply", "try_confirm_flow", "_reminder_line", "_shown_last"}


def _called(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {
        node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
    }


def _names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Name):
            found.add(node.id)
    return found


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_each_front_end_runs_the_front_desks_steps(front_end: str) -> None:
    path = ROOT / front_end
    assert "run_line" in _called(path)
    assert _called(path) & ROUTING_CALLS == set()  # no chain of its own


def test_lines_are_routed_only_by_the_front_desk() -> None:
    routing = {
        str(path.relative_to(ROOT)): sorted(_called(path) & ROUTING_CALLS)
        for path in _modules("bot")
        if str(path.relative_to(ROOT)) not in MAY_ROUTE and _called(path) & ROUTING_CALLS
    }
    assert routing == {}
    left = {
        str(path.relative_to(ROOT)): sorted(_names(path) & OLD_NAMES)
        for path in _modules("bot")
        if _names(path) & OLD_NAMES
    }
    assert left == {}


def test_the_front_desk_checker_sees_a_chain_of_its_own(tmp_path: Path) -> None:
    chain = tmp_path / "front.py"
    chain.write_text(
        "async def on_text(desk, backend, line):\n"
        "    if backend.classify(line):\n"
        "        return await desk.answer_word(line)\n",
        encoding="utf-8",
    )
    assert _called(chain) & ROUTING_CALLS == {"classify", "answer_word"}
    assert "on_text" in _names(chain) and "run_line" not in _called(chain)


# issue 29 part D
# The model servers' SDKs (and httpx, their transport) are imported by the LLM clients only;
# bench/web.py's httpx drives the web page, not a model.
MODEL_SDK_OWNERS = {
    "openai": ("agent/openai_client.py",),
    "ollama": ("agent/ollama_client.py",),
    "httpx": ("agent/openai_client.py", "agent/ollama_client.py", "bench/web.py"),
}
COMPOSITION_ROOT = "bot/app.py"
# The functions (and fields) outside the composition root that still take the Services bag:
# the outer adapters the tests call with it (each unpacks it once), and the modules whose
# inner code still reads it (follow-up work). The list may only shrink.
TAKES_SERVICES = {
    "bot/cli.py": {"cmd_export"},
    "bot/fading.py": {"fade_every", "fading_job"},
    "bot/frontdesk/backend.py": {"backend_for"},
    "bot/frontdesk/reminder_desk.py": {"reminder_desk_for"},
    "bot/jobs.py": {
        "JobRunner.services",
        "_problems",
        "forget_undo_job",
        "idle_summaries_job",
        "index_job",
        "lifecycle_job",
        "pending_expiry_job.body",
        "user_jobs.forget_undo",
        "user_jobs.idle",
        "user_jobs.index",
        "user_jobs.lifecycle",
    },
    "bot/scheduling.py": {"ptb_job_setup", "scheduled"},
    "bot/serve.py": {"_web", "chat"},
    "bot/web/app.py": {"build_deps"},
    "bot/web/shaping.py": {"Shaper.__init__"},
}


@pytest.mark.parametrize("sdk", sorted(MODEL_SDK_OWNERS))
def test_only_the_llm_clients_import_a_model_sdk(sdk: str) -> None:
    owners = MODEL_SDK_OWNERS[sdk]
    wrong = [
        str(path.relative_to(ROOT))
        for package in (*PACKAGES, "bench")
        for path in _modules(package)
        if any(name.split(".")[0] == sdk for name in _imports(path))
        and str(path.relative_to(ROOT)) not in owners
    ]
    assert wrong == []


def _is_services(annotation: ast.expr | None) -> bool:
    """Whether an annotation names the bag (``Services``, ``"Services"``, ``Services | None``)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    return any(isinstance(n, ast.Name) and n.id == "Services" for n in ast.walk(annotation))


def _takes_services(path: Path) -> set[str]:
    """The functions of ``path`` with a parameter typed ``Services``, and the fields so typed."""
    found: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                args = child.args
                params = (*args.posonlyargs, *args.args, *args.kwonlyargs)
                if any(_is_services(a.annotation) for a in params):
                    found.add(prefix + child.name)
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                for stmt in child.body:
                    if isinstance(stmt, ast.AnnAssign) and _is_services(stmt.annotation):
                        found.add(f"{prefix}{child.name}.{ast.unparse(stmt.target)}")
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_only_the_composition_root_takes_the_services_bag() -> None:
    taking = {
        rel: names
        for package in PACKAGES
        for path in _modules(package)
        if (rel := str(path.relative_to(ROOT))) != COMPOSITION_ROOT
        and (names := _takes_services(path))
    }
    assert taking == TAKES_SERVICES


def test_the_services_checker_sees_a_parameter_and_a_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "class Deps:\n    services: 'Services | None'\n\n"
        "def inner(s: Services) -> None:\n    def deeper(x: int, *, s: Services) -> None: ...\n",
        encoding="utf-8",
    )
    assert _takes_services(bad) == {"Deps.services", "inner", "inner.deeper"}


# issue 29 part A: each table of pcai.db is created only by its owner's migration set.
# memory/state/migrations.py's m001 and m004 shipped before the sets and are frozen: on a new
# file they still create other owners' tables, so they are allowed those (and only those).
TABLE_OWNERS = {
    "memory/state/migrations.py": {
        "{TABLE}",  # _migrations: the runner's record of what it applied
        "pending_memories",
        "pending_messages",
        "memory_access",
        "short_term_memory",
        "forget_undo",
        "fading_notices",
    },
    "agent/schema.py": {"deferred_work", "last_injection", "injection_history"},
    "agent/notices.py": {"told_problems", "notice_batches", "notice_outbox"},
    "agent/reminders/schema.py": {"reminders", "reminder_users"},
    "bot/telegram/open_turns.py": {"open_turns"},
    "bot/web/schema.py": {"web_login_links", "web_sessions", "web_initdata_spent"},
    "bot/frontdesk/schema.py": {"user_language"},
}
# index.db is rebuilt from the Markdown, never migrated: its tables stay with the index.
INDEX_TABLES = {
    "memory/index/schema.py": {
        "files",
        "chunks",
        "meta",
        "passage_vec",
        "memory_view",
        "line_background",
    },
    "memory/index/fts.py": {"fts_tables"},
}
FROZEN_FOREIGN = {  # the tables m001 and m004 made for other owners before the sets
    "last_injection",
    "told_problems",
    "notice_batches",
    "notice_outbox",
    "reminders",
    "reminder_users",
    "web_login_links",
    "web_sessions",
    "injection_history",
}
_CREATE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?!IF\b)([\w{}]+)", re.I)


def _tables_created(root: Path) -> dict[str, set[str]]:
    """Which tables each module of the shipped packages creates (from its source text)."""
    made: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            found = set(_CREATE.findall(path.read_text(encoding="utf-8")))
            if found:
                made[path.relative_to(root).as_posix()] = found
    return made


def _foreign_tables(root: Path) -> dict[str, set[str]]:
    wrong = {}
    for module, tables in _tables_created(root).items():
        allowed = TABLE_OWNERS.get(module, set()) | INDEX_TABLES.get(module, set())
        if module == "memory/state/migrations.py":
            allowed |= FROZEN_FOREIGN
        if tables - allowed:
            wrong[module] = tables - allowed
    return wrong


def test_each_table_is_created_only_by_its_owner() -> None:
    made = _tables_created(ROOT)
    wrong = _foreign_tables(ROOT)
    assert wrong == {}, f"tables created outside their owner's migration set: {wrong}"
    owned = set().union(*TABLE_OWNERS.values())
    for module, tables in TABLE_OWNERS.items():
        assert tables <= made.get(module, set()), f"{module} no longer creates {tables}"
    assert len(owned - {"{TABLE}"}) == 19  # every table of pcai.db has one owner


def test_the_table_checker_sees_a_foreign_table(tmp_path: Path) -> None:
    (tmp_path / "memory" / "state").mkdir(parents=True)
    (tmp_path / "memory" / "state" / "x.py").write_text(
        'SQL = "CREATE TABLE IF NOT EXISTS open_turns (a)"\n', encoding="utf-8"
    )
    assert _foreign_tables(tmp_path) == {"memory/state/x.py": {"open_turns"}}


# issue 29 part E: language text has one shape, the catalogue. Only the catalogue and the
# language chooser compare a language code; everything else says a key (``say(key, lang)``).
LANGUAGE_CHOOSERS = (
    "agent/texts/",  # the catalogue: which one a language reads
    "bot/frontdesk/texts.py",  # the catalogue's edge: a section named in both languages
    "bot/frontdesk/language.py",  # the chooser: which language a person reads
    "agent/prompt.py",  # the model's instruction names the reply's language
)


def _language_comparisons(root: Path) -> list[str]:
    found: list[tuple[str, int]] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(LANGUAGE_CHOOSERS):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Compare) and any(
                    isinstance(side, ast.Constant) and side.value in ("zh", "en")
                    for side in (node.left, *node.comparators)
                ):
                    found.append((rel, node.lineno))
    return [f"{rel}:{line}" for rel, line in sorted(found)]


def test_only_the_catalogue_and_the_chooser_compare_a_language() -> None:
    found = _language_comparisons(ROOT)
    assert not found, f'say a catalogue key instead of comparing to "zh"/"en": {found}'


def test_the_language_checker_sees_a_comparison(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bad.py").write_text(
        'def f(lang: str) -> str:\n    return "好" if lang == "zh" else "good"\n'
        'def g(lang: str) -> bool:\n    return "en" != lang\n',
        encoding="utf-8",
    )
    assert _language_comparisons(tmp_path) == ["bot/bad.py:2", "bot/bad.py:4"]
