"""``mtscore human agreement``: the refbias analysis end to end, and bad input as one-line errors
(exit 1) or documented NaN results with a warning (exit 0), never a traceback."""
from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mtscore.bindings.cli.analysis import main
from tests.conftest import require

GROUPS = """# Fomicheva & Specia (2016) batches
batch1: j1 j4 j10 j20 j21
batch2: j5 j7 j16 j19 j22
batch3: j2 j6 j8 j15 j25
batch4 = [j9, j13, j14, j18, j24]
batch5: j3 j11 j12 j17 j23
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        rc = main(["human", "agreement", *argv])
    except SystemExit as e:
        rc = e.code
    got = capsys.readouterr()
    return rc, got.err, got.out


def write(tmp_path: Path, name: str, lines: Sequence[str]) -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def assert_one_line(err: str, *fragments: str, prefix: str = "mtscore: error: ") -> None:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1, err
    assert err.startswith(prefix), err
    for f in fragments:
        assert f in err, (f, err)


@pytest.fixture(scope="module")
def ratings_all(shared_data: Path) -> str:
    return str(require(shared_data / "refbias" / "ratings_all"))


def test_refbias_json(ratings_all, tmp_path, capsys):
    groups = write(tmp_path, "groups.txt", GROUPS.splitlines())
    rc, err, out = run(capsys, ratings_all, "--groups", groups, "--source-groups", "batch5", "--format", "json",
                       "--seed", "3")
    assert rc == 0, err
    assert err == "", err
    res = json.loads(out)
    assert res["judges"] == 25
    assert res["items"] == 100
    assert len(res["pairs"]) == 300
    st = {s["setting"]: s for s in res["settings"]}
    assert [s["setting"] for s in res["settings"]] == ["SOURCE", "SAME", "DIFF", "SOURCE-REF"]
    assert round(st["SAME"]["mean_kappa"], 3) == 0.197
    assert round(st["DIFF"]["mean_kappa"], 3) == 0.164
    assert abs(st["SAME"]["low"] - 0.165) < 0.005
    assert abs(st["DIFF"]["high"] - 0.179) < 0.005
    table2 = {(r["setting_a"], r["setting_b"]): (round(100 * r["share"]), r["total"]) for r in res["nonoverlap"]}
    assert table2[("SOURCE", "SOURCE")] == (47, 45)
    assert table2[("SAME", "DIFF")] == (13, 6000)
    j1j4 = next(p for p in res["pairs"] if (p["judge_a"], p["judge_b"]) == ("j1", "j4"))
    assert (j1j4["low"], j1j4["kappa"], j1j4["high"]) == pytest.approx(
        (-0.0586780694867343, 0.0735461801596351, 0.205770429806004), abs=1e-12)  # psych, kappas_all.txt
    assert j1j4["setting"] == "SAME"
    assert j1j4["group_a"] == "batch1"
    pct = np.array(res["crosstab"]["SAME"]["row_percent"])
    assert np.allclose(pct.sum(axis=1), 100)


def test_refbias_csv_weighted_and_text(ratings_all, tmp_path, capsys):
    rc, err, out = run(capsys, ratings_all, "--weights", "quadratic", "--format", "csv")
    assert rc == 0
    assert err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 300
    assert rows[0]["setting"] == "ALL"
    j1j2 = rows[0]
    assert (j1j2["judge_a"], j1j2["judge_b"]) == ("j1", "j2")
    assert float(j1j2["kappa"]) == pytest.approx(0.422081849338082, abs=1e-12)
    assert float(j1j2["high"]) == pytest.approx(0.573947608427091, abs=1e-12)
    out_path = tmp_path / "k.txt"
    rc, err, out = run(capsys, ratings_all, "-o", str(out_path))
    assert rc == 0
    assert out == ""
    assert "ALL" in out_path.read_text()


def test_long_layout_equals_wide(tmp_path, capsys):
    wide = ["j1;j2;j3", "1;2;1", "2;2;3", "3;3;3", "NA;1;1", "1;1;2"]
    long = ["judge_id;segment_id;rating"] + [f"j{j + 1};{i};{c}" for i, ln in enumerate(wide[1:])
                                             for j, c in enumerate(ln.split(";")) if c != "NA"]
    a = json.loads(run(capsys, write(tmp_path, "w.csv", wide), "--format", "json")[2])
    b = json.loads(run(capsys, write(tmp_path, "l.csv", long), "--format", "json")[2])
    assert a["pairs"] == b["pairs"]
    assert a["pairs"][0]["n"] == 4


def test_no_common_items_and_constant_ratings_are_nan_with_warning(tmp_path, capsys):
    # j1 and j2 never rate the same item; j3 and j4 both always say 3 where both rate
    lines = ["j1 j2 j3 j4", "1 NA 3 3", "2 NA 3 3", "NA 1 3 3", "NA 2 3 3", "NA 3 3 3"]
    rc, err, out = run(capsys, write(tmp_path, "r.txt", lines), "--format", "json")
    assert rc == 0
    assert "Traceback" not in err
    assert "1 judge pair(s) share no rated item: kappa is NaN for j1-j2" in err
    assert "1 judge pair(s) gave one and the same rating to every common item (kappa undefined): kappa is NaN " \
           "for j3-j4" in err
    pairs = {(p["judge_a"], p["judge_b"]): p for p in json.loads(out)["pairs"]}
    assert pairs[("j1", "j2")]["n"] == 0
    assert pairs[("j1", "j2")]["kappa"] is None
    assert pairs[("j3", "j4")]["n"] == 5
    assert pairs[("j3", "j4")]["kappa"] is None
    assert pairs[("j1", "j3")]["kappa"] == 0  # one constant judge: kappa 0, as psych
    rc, err, out = run(capsys, write(tmp_path, "r.txt", lines), "--format", "csv")
    assert rc == 0
    assert "j1,j2,,,ALL,0,nan,nan,nan,nan" in out


@pytest.mark.parametrize(("lines", "extra", "fragments"), [
    (["judge;segment_id", "j1;1", "j2;1"], (), ("r.csv:1: missing column(s) rating (rating, score)",)),
    (["judge;rating", "j1;1", "j2;1"], (), ("r.csv:1: missing column(s) item (item, segment_id, sid)",)),
    (["j1;j2", "1;2", "7;1"], ("--levels", "1-5"),
     ("r.csv:3: column 1 (j1): rating 7 is outside the scale (1, 2, 3, 4, 5) given by --levels",)),
    (["j1;j2", "1;2", "1;good"], (), ("r.csv:3: column 2 (j2): 'good' is not a number",)),
    (["j1;j2", "1;2", "1;inf"], (), ("r.csv:3: column 2 (j2): 'inf' is not a finite number",)),
    (["j1;j2;j3", "1;2;3", "1;2"], (), ("r.csv:3: expected 3 fields (as many as the header has columns), found 2",)),
    (["j1;j2"], (), ("r.csv: only a header, no ratings",)),
    ([""], (), ("r.csv: empty file",)),
    (["j1", "1", "2"], (), ("r.csv:1: 1 judge column(s) in the header",)),
    (["j1;j1", "1;2"], (), ("r.csv:1: judge column(s) j1 appear twice",)),
    (["worker,item,score", "a,1,3", "b,1,2", "a,1,4"], (),
     ("r.csv:4: judge 'a' rates item '1' again (first on line 2)",)),
    (["j1;j2", "1;2", "2;1"], ("--source-groups", "g"), ("--source-groups needs --groups",)),
])
def test_bad_ratings(tmp_path, capsys, lines, extra, fragments):
    rc, err, _ = run(capsys, write(tmp_path, "r.csv", lines), *extra)
    assert rc == 1
    assert_one_line(err, *fragments)


@pytest.mark.parametrize(("groups", "extra", "fragments"), [
    (["g1: j1 j2", "g2: j3 j9"], (), ("g.txt:2: judge 'j9' of group 'g2' is not a judge of the ratings",)),
    (["g1: j1 j2", "g2: j2 j3"], (), ("g.txt:2: judge 'j2' is already in a group (line 1)",)),
    (["g1: j1 j2"], (), ("g.txt: judge(s) j3 are in no group",)),
    (["g1 j1 j2 j3"], (), ("g.txt:1: expected 'GROUP: judge judge ...'",)),
    (["g1: j1", "g1: j2 j3"], (), ("g.txt:2: group 'g1' again (first on line 1)",)),
    (["g1:", "g2: j1 j2 j3"], (), ("g.txt:1: group 'g1' has no judges",)),
    (["# nothing"], (), ("g.txt: no groups",)),
    (["g1: j1 j2", "g2: j3"], ("--source-groups", "src"), ("--source-groups: unknown group(s) src",)),
])
def test_bad_groups(tmp_path, capsys, groups, extra, fragments):
    r = write(tmp_path, "r.csv", ["j1 j2 j3", "1 2 1", "2 2 3", "3 1 3"])
    rc, err, _ = run(capsys, r, "--groups", write(tmp_path, "g.txt", groups), *extra)
    assert rc == 1
    assert_one_line(err, *fragments)


@pytest.mark.parametrize(("argv", "fragment"), [
    (("--levels", "5"), "--levels"), (("--levels", "a-b"), "--levels"), (("--levels", "1,1"), "--levels"),
    (("--weights", "cubic"), "--weights"), (("--alpha", "0"), "--alpha"), (("--bootstrap", "0"), "--bootstrap"),
])
def test_bad_options_are_usage_errors(tmp_path, capsys, argv, fragment):
    r = write(tmp_path, "r.csv", ["j1 j2", "1 2", "2 2"])
    rc, err, _ = run(capsys, r, *argv)
    assert rc == 2
    assert_one_line(err, fragment, prefix="mtscore human agreement: error: ")


def test_missing_file(tmp_path, capsys):
    rc, err, _ = run(capsys, str(tmp_path / "nope.csv"))
    assert rc == 1
    assert_one_line(err, "nope.csv: file not found")


def test_levels_use_every_category(tmp_path, capsys):
    """--levels 1-5: weights over the whole scale even where a pair used three ratings."""
    r = write(tmp_path, "r.csv", ["a b", "1 2", "2 2", "5 5", "5 2", "1 1", "2 5"])
    k3 = json.loads(run(capsys, r, "--weights", "linear", "--format", "json")[2])["pairs"][0]["kappa"]
    k5 = json.loads(run(capsys, r, "--weights", "linear", "--levels", "1-5", "--format", "json")[2])["pairs"][0]
    assert k3 == pytest.approx(0.4)
    assert k5["kappa"] == pytest.approx(10 / 31)
    assert not math.isnan(k5["low"])
