"""Shared fixtures and helpers of the Ray tests (test_ray.py, test_ray_faults.py): the WMT21
Parquet tables, a local 2-CPU Ray instance, the runtime environment that makes Ray workers import
this checkout, and the exact comparison with local ``mtscore`` results."""
import os

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install \"mtscore[ray]\")")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install \"mtscore[ray]\")")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from wmt21 import load_pair, pairs  # noqa: E402

METRICS = ["bleu", "chrf", "chrf++", "ter"]
N = 240  # segments per system
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def worker_env():
    """Ray workers must import this checkout's mtscore (compiled kernels included)."""
    path = os.environ.get("PYTHONPATH", "")
    return {"env_vars": {"PYTHONPATH": REPO_ROOT + (os.pathsep + path if path else "")}}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """A long table of 3 en-de systems x N segments, 2 references, as Parquet in small row
    groups (so Ray cuts it into several blocks), plus a single-reference, single-system one."""
    if "newstest2021.en-de" not in pairs():
        pytest.skip("wmt21-news-systems data not found (set MTSCORE_DATA)")
    refs, systems, _ = load_pair("newstest2021.en-de")
    names = list(systems)[:3]
    d = tmp_path_factory.mktemp("ray")
    rows = {"hyp": [], "ref_0": [], "ref_1": [], "system": []}
    for s in names:
        rows["hyp"] += systems[s][:N]
        rows["ref_0"] += refs[0][:N]
        rows["ref_1"] += refs[1][:N]
        rows["system"] += [s] * N
    multi = d / "multi.parquet"
    pq.write_table(pa.table(rows), multi, row_group_size=100)
    single = d / "single.parquet"
    pq.write_table(pa.table({"hyp": systems[names[0]][:N], "ref": refs[0][:N]}), single,
                   row_group_size=64)
    return {"multi": str(multi), "single": str(single), "names": names, "dir": d}


@pytest.fixture
def local_ray():
    """A local Ray instance with 2 CPUs (kept for the module's tests; a cluster test stops it)."""
    if not ray.is_initialized():
        # address="local": a new instance even when another test process (pytest-xdist) runs one
        ray.init(address="local", num_cpus=2, include_dashboard=False, runtime_env=worker_env())
    return ray


def check_equal(r, loc, systems, metrics=METRICS, stats=True):
    for s in systems:
        for m in metrics:
            got = r.corpus[s][m] if s is not None else r.corpus[m]
            want = loc.corpus[s][m] if s is not None else loc.corpus[m]
            assert got.score == want.score, (s, m)
            assert str(got) == str(want)
            if stats:
                key = s if s is not None else "hyp"
                np.testing.assert_array_equal(r.stats[key][m], loc.stats[key][m])
    assert r.signatures == {m: loc.signatures[m] for m in metrics}
