"""Shared fixtures. Real WMT data is located through MTSCORE_DATA (default ../shared/data
relative to the repository root); tests that need it skip, saying why, when it is absent."""
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    return Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    d = data_dir()
    if not d.is_dir():
        pytest.skip(f"shared WMT data not found at {d} (set MTSCORE_DATA to its folder)")
    return d


def require(path: Path) -> Path:
    """Return ``path`` or skip the calling test, naming the missing file."""
    if not path.exists():
        pytest.skip(f"missing data file {path} (set MTSCORE_DATA)")
    return path
