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
# Outside SDKs, and the only modules allowed to import them.
SDK_OWNERS = {"telegram": ("bot/",), "ollama": ("agent/ollama_client.py",)}


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
        for package in PACKAGES
        for path in _modules(package)
        if any(name.split(".")[0] == sdk for name in _imports(path))
        and not str(path.relative_to(ROOT)).startswith(owners)
    ]
    assert wrong == []


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from bot.app import Services\nimport telegram\n", encoding="utf-8")
    assert _imports(bad) == ["bot.app", "telegram"]
