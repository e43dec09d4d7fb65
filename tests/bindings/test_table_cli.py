"""`mtscore score-table` on local tables: file and column errors name the command's options, and
--missing-refs skip scores a table with null references like the table without those rows."""
from __future__ import annotations

import json

import pytest

from tests.cli_run import run_cli as _cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def tables(tmp_path):
    hyps = ["the cat sat on the mat", "a dog ran", "it is raining today", "hello world"]
    refs = ["the cat sat on a mat", None, "it rains today", "hello there world"]
    full = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": hyps, "ref": refs}), full)
    kept = tmp_path / "kept.parquet"
    pq.write_table(pa.table({"hyp": [h for h, r in zip(hyps, refs) if r is not None],
                             "ref": [r for r in refs if r is not None]}), kept)
    return full, kept


def test_missing_refs_error_names_the_option(tables, capsys):
    rc, out, err = _cli(["score-table", str(tables[0]), "-m", "bleu"], capsys)
    assert rc == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "segment 1 (0-based) has no reference" in err
    assert "pass --missing-refs skip" in err


def test_missing_refs_skip_equals_the_table_without_those_rows(tables, capsys):
    argv = ["-m", "bleu", "chrf", "ter", "wer", "--score-only", "-f", "json"]
    rc, skipped, err = _cli(["score-table", str(tables[0]), "--missing-refs", "skip", *argv], capsys)
    assert rc == 0
    assert err.count("1 of 4 segment(s) have no reference and were skipped") == 4
    rc, kept, _ = _cli(["score-table", str(tables[1]), *argv], capsys)
    assert rc == 0
    assert json.loads(skipped) == json.loads(kept)
    assert len(json.loads(kept)) == 4
    assert json.loads(kept)[1] > 0


@pytest.mark.parametrize(("name", "argv", "msg"), [
    ("nope.parquet", [], "nope.parquet: file not found"),
    ("hyp.bin", [], "hyp.bin: not a table file (the format comes from the extension: tsv, csv"),
    ("t.parquet", ["--hyp", "h"], "no column 'h' (available: 'hyp', 'ref'); pass --hyp to name it"),
    ("t.parquet", ["--ref-columns", "r"], "no column 'r' (available: 'hyp', 'ref'); pass --ref-columns"),
    ("t.parquet", ["--system-column", "s"], "no column 's' (available: 'hyp', 'ref'); pass --system-column"),
])
def test_file_and_column_errors_are_one_line(tables, tmp_path, capsys, name, argv, msg):
    (tmp_path / "hyp.bin").write_bytes(b"a b\nc d\n")
    rc, out, err = _cli(["score-table", str(tmp_path / name), *argv], capsys)
    assert rc == 1, err
    assert out == "", err
    assert len(err.strip().splitlines()) == 1, err
    assert msg in err, err


def test_os_errors_read_path_then_reason():
    from mtscore.bindings.cli.runner import os_error_line
    from mtscore.engine.atomic import OutputError

    assert os_error_line(FileNotFoundError(2, "No such file or directory", "x.txt")) == \
        "x.txt: file not found"
    assert os_error_line(IsADirectoryError(21, "Is a directory", "d")) == "d: is a folder, expected a file"
    assert os_error_line(OSError(5, "Input/output error", "f")) == "f: Input/output error"
    assert os_error_line(OSError("no file name")) == "no file name"
    assert os_error_line(OutputError(2, "its folder does not exist", "o/x", "--output o/x")) == \
        "cannot write --output o/x: its folder does not exist"


def test_make_metric_names_unknown_options():
    from mtscore.engine.metrics.registry import make_metric

    with pytest.raises(TypeError, match=r"^ter: unknown option\(s\) beta, nope; its options: "
                                        r"normalized, no_punct, asian_support, case_sensitive"):
        make_metric("ter", nope=1, beta=2)
    assert make_metric("chrf++", beta=3).beta == 3
