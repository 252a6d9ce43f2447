"""pyproject.toml builds without warnings: the license is an SPDX string (PEP 639).

A ``license = {text = ...}`` table made every ``make install`` print setuptools' deprecation
warning; the string form needs setuptools 77 or later in the build requirements, or older
build backends refuse it. (Checked by hand with ``pip wheel --no-deps -w /tmp/whl .``.)
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_license_is_an_spdx_expression_and_the_backend_can_read_it() -> None:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    license_ = data["project"]["license"]
    assert isinstance(license_, str), "a TOML table is deprecated: setuptools warns on every build"
    assert canonicalize_license_expression(license_) == license_
    setuptools = [
        Requirement(r) for r in data["build-system"]["requires"] if r.startswith("setuptools")
    ]
    assert len(setuptools) == 1
    allowed = setuptools[0].specifier
    assert not allowed.contains("76.1") and allowed.contains("77.0")  # 77 reads the string
