"""Locate google-research/mt-metrics-eval (the test oracle) through MTSCORE_ORACLES (default
the ``oracles`` folder beside MTSCORE_DATA, i.e. ../shared/oracles); skip, saying why, when it is absent. Its data.py imports apache_beam only
for parallel runs, so a stub module stands in for it."""
import os
import sys
import types
from pathlib import Path

import pytest
from conftest import data_dir


def oracle():
    # default: beside the shared data folder (../shared/oracles next to ../shared/data)
    root = Path(os.environ.get("MTSCORE_ORACLES", data_dir().parent / "oracles")) / "mt-metrics-eval"
    if not (root / "mt_metrics_eval" / "stats.py").is_file():
        pytest.skip(f"mt-metrics-eval oracle not found at {root} (set MTSCORE_ORACLES)")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    for name in ("apache_beam", "dacite"):  # used by parts of data.py the tests do not call
        sys.modules.setdefault(name, types.ModuleType(name))
    from mt_metrics_eval import data, pce, stats

    return types.SimpleNamespace(stats=stats, data=data, pce=pce)
