"""The layering the README's "Layout" promises: imports flow bot -> agent -> {memory, history}.

Read from the source with ``ast``, so a new module that imports the wrong way fails here, and
so does one that reaches for Telegram or Ollama outside the one place allowed to.
"""

from __future__ import annotations

import ast
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


# issue 29 part E: language text has one shape, the catalogue. Only the catalogue and the
# language chooser compare a language code; everything else says a key (``say(key, lang)``).
LANGUAGE_CHOOSERS = (
    "agent/texts/",  # the catalogue: which one a language reads
    "bot/frontdesk/texts.py",  # the catalogue's edge: a section named in both languages
    "bot/frontdesk/language.py",  # the chooser: which language a person reads
    "agent/prompt.py",  # the model's instruction names the reply's language
    # Part B turns these reminder texts into catalogue keys in parallel; drop them after it.
    "agent/reminders/",
    "bot/frontdesk/reminder_desk.py",
    "bot/telegram/reminders.py",
    "agent/turn/tools.py",  # a reminder error's (en, zh) and a reminder's understood_zh/_en
    "agent/forget.py",  # the same reminder error, and when_zh / when_en
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
