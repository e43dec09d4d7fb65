"""The version is written once (mtscore/_version.py): the installed package metadata, which
setuptools reads from that file ([tool.setuptools.dynamic] in pyproject.toml), equals
``mtscore.__version__``, and pyproject.toml writes no second copy."""
from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

import mtscore

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def test_installed_metadata_version_is_mtscore_version():
    try:
        installed = metadata.version("mtscore")
    except metadata.PackageNotFoundError:
        pytest.skip("mtscore is not installed (run from a source tree on sys.path)")
    assert installed == mtscore.__version__


def test_pyproject_reads_the_version_from_version_py():
    if not (ROOT / "pyproject.toml").exists():
        pytest.skip("no pyproject.toml beside the tests")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "mtscore._version.__version__"}
