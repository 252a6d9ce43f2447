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
# Every source module, tests and benchmarks included, stays under this many lines.
MAX_LINES = 400
LINE_CHECKED = ("bot", "agent", "memory", "history", "bench", "tests")


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


def _over_the_limit() -> dict[str, int]:
    lengths = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for package in LINE_CHECKED
        for path in _modules(package)
    }
    assert len(lengths) > 100
    return {name: n for name, n in sorted(lengths.items()) if n > MAX_LINES}


def test_no_module_is_over_the_line_limit() -> None:
    long = _over_the_limit()
    assert not long, f"over {MAX_LINES} lines, split along a real seam: {long}"


def test_the_checker_sees_a_telegram_free_module_and_a_long_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bot" / "telegram").mkdir(parents=True)
    (tmp_path / "bot" / "telegram" / "plain.py").write_text("import json\n", encoding="utf-8")
    (tmp_path / "bot" / "telegram" / "tg.py").write_text("import telegram\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    for i in range(101):
        (tmp_path / "tests" / f"short{i}.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"bot/telegram/plain\.py"):
        test_every_telegram_module_is_telegram_code()
    assert _over_the_limit() == {"tests/long.py": MAX_LINES + 1}
