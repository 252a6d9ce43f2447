"""Memory's own fixtures: the library opened through its front door, with no bot/ in sight."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import memory
from memory import E5Embedder, Memory


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh data folder."""
    return tmp_path / "botmemory"


@pytest.fixture
def library(data_dir: Path, embedder: E5Embedder) -> Iterator[Memory]:
    """``memory.open`` on the fresh data folder, with the session's e5 embedder."""
    with memory.open(data_dir, embedder=embedder) as opened:
        yield opened
