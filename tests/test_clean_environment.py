"""The autouse fixture in tests/conftest.py: no test sees the developer's shell or checkout.

These tests do not ask for the fixture by name: they pass only because it is autouse.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import SETTING_PREFIXES

ROOT = Path(__file__).resolve().parents[1]


def test_a_test_runs_in_an_empty_folder_of_its_own() -> None:
    cwd = Path.cwd().resolve()
    assert ROOT not in (cwd, *cwd.parents)
    assert [p.name for p in cwd.iterdir()] == []


def test_only_a_temporary_data_dir_is_set() -> None:
    settings = sorted(name for name in os.environ if name.startswith(SETTING_PREFIXES))
    assert settings == ["PCAI_DATA_DIR", "PCAI_LLM_DISCOVER"]
    assert Path(os.environ["PCAI_DATA_DIR"]) == Path.cwd() / "botmemory"
    assert os.environ["PCAI_LLM_DISCOVER"] == "127.0.0.1:9"  # no developer's model server
