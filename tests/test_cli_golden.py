"""Golden command lines (P16 "no behaviour change"): every subcommand, output format, significance
option and a set of error cases, recorded before the restructuring in tests/golden/cli/<name>.json,
is replayed in a fresh subprocess (``python -m mtscore``, CI=true, COLUMNS=80, no terminal) and
its exit code, stdout, stderr and written files must be byte-identical (Parquet: schema, schema
metadata and rows). Only the temporary folder, the data folder and the repository root are
normalised to placeholders. To re-record after an intended change of behaviour, see
tests/golden/cli/record.py."""
import importlib.util
import sys

import pytest
from conftest import REPO

_spec = importlib.util.spec_from_file_location("golden_cli_record", REPO / "tests" / "golden" / "cli" / "record.py")
assert _spec is not None
assert _spec.loader is not None
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)

RECORDED = record.load_recorded()


def test_every_case_is_recorded():
    """The case list and the recorded files agree (a new case needs ``record.py NAME``)."""
    assert [c["name"] for c in RECORDED] == [c["name"] for c in record.cases()]


@pytest.mark.parametrize("case", RECORDED, ids=[c["name"] for c in RECORDED])
def test_cli_golden(case, tmp_path):
    missing = [p for p in record.needs_data(case) if not (record.data_dir() / p).exists()]
    if missing:
        pytest.skip(f"shared WMT data not found: {record.data_dir() / missing[0]} (set MTSCORE_DATA)")
    got = record.run_case(case, tmp_path, REPO, sys.executable)
    assert got["stdout"] == case["stdout"]
    assert got["stderr"] == case["stderr"]
    assert got["rc"] == case["rc"]
    assert got["files"] == case["files"]

