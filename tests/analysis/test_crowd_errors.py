"""Bad input to the raw-batch DA pipeline: clear one-line errors or documented NaN, never a traceback."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.crowd.batches import read_mturk_batches
from mtscore.analysis.crowd.scores import da_pipeline
from mtscore.analysis.errors import AnalysisInputError
from mtscore.bindings.cli.analysis import main

HEADER = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime", "SubmitTime",
          "WorkTimeInSeconds", "Input.src", "Input.trg", "Input.item", "Input.hit", "Answer.Q1", "Answer.comments"]


def _batch(path: Path, assignments, header=HEADER) -> Path:
    """assignments: (hit, worker, [(sys, sid, type, score), ...])"""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(header)
        for k, (hit, worker, items) in enumerate(assignments):
            ans = "|".join(f"{s}_{sid}_{t}_{i}__{sc}" for i, (s, sid, t, sc) in enumerate(items))
            row = {"HITId": hit, "AssignmentId": f"A{k}", "WorkerId": worker, "AssignmentStatus": "Submitted",
                   "AcceptTime": "Wed Nov 23 10:00:00 PST 2016", "SubmitTime": "Wed Nov 23 10:30:00 PST 2016",
                   "WorkTimeInSeconds": "1800", "Input.src": "'en'", "Input.trg": "'es'", "Input.item": "'ad'",
                   "Input.hit": str(k), "Answer.Q1": ans, "Answer.comments": "{}"}
            w.writerow([row.get(h, "") for h in header])
    return path


def _good_items(rng, n=10):
    items = []
    for j in range(n):
        o = int(rng.integers(40, 100))
        items += [("sys", str(j), "SYSTEM", o), ("sys", str(j), "BAD_REF", max(o - 30, 0) + int(rng.integers(0, 5))),
                  ("sys", str(j), "REPEAT", o), ("sys", str(j), "REF", 95)]
    return items


def test_missing_column(tmp_path, capsys):
    f = _batch(tmp_path / "Batch_1.csv", [("H1", "W1", _good_items(np.random.default_rng(0)))],
               header=[h for h in HEADER if h != "WorkTimeInSeconds"])
    with pytest.raises(AnalysisInputError, match=r"Batch_1.csv:1: missing column\(s\) WorkTimeInSeconds"):
        read_mturk_batches(f, items_per_hit=None)
    assert main(["human", "da-batches", str(f), "--items-per-hit", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mtscore: error:")
    assert "WorkTimeInSeconds" in err
    assert "Traceback" not in err


def test_rating_outside_scale(tmp_path, capsys):
    items = _good_items(np.random.default_rng(1))
    items[5] = ("sys", "1", "SYSTEM", 120)
    f = _batch(tmp_path / "Batch_2.csv", [("H1", "W1", items)])
    with pytest.raises(AnalysisInputError, match=r"Batch_2.csv:2: column Answer.Q1, item 6 .*score '120' is outside "
                                                 r"the scale \[0, 100\]"):
        read_mturk_batches(f, items_per_hit=None)
    assert main(["human", "da-batches", str(f), "--items-per-hit", "0"]) == 1
    assert "outside the scale" in capsys.readouterr().err
    # a HIT on a 1-100 slider read with its own scale is fine
    assert len(read_mturk_batches(f, items_per_hit=None, scale=(0, 120))) == 40


def test_unreadable_answer_item(tmp_path):
    f = _batch(tmp_path / "Batch_3.csv", [("H1", "W1", [("sys", "1", "GOOD", 50)])])
    with pytest.raises(AnalysisInputError, match="item 1: cannot read 'sys_1_GOOD_0__50'"):
        read_mturk_batches(f, items_per_hit=None)


def test_worker_with_one_rating_and_incomplete_hit(tmp_path, capsys):
    rng = np.random.default_rng(2)
    rows = [("H1", "W1", _good_items(rng)), ("H2", "W2", _good_items(rng)), ("H3", "W3", [("sys", "0", "SYSTEM", 70)])]
    f = _batch(tmp_path / "Batch_4.csv", rows)
    r = read_mturk_batches(f, items_per_hit=None)
    res = da_pipeline(r)
    one = r.worker == "W3"
    assert np.isnan(res.z[one]).all()
    assert not res.used[one].any()
    i = int(np.flatnonzero(res.qc.worker == "W3")[0])
    assert res.qc.status[i] == "untestable"
    assert np.isnan(res.qc.p[i])
    assert set(res.qc.worker[res.qc.passed]) == {"W1", "W2"}
    # each segment 0..9 has the SYSTEM and REPEAT ratings of W1 and W2
    assert res.segments.n.tolist() == [4] * 10
    # with 40 answers per HIT required, W3's 1-answer assignment is left out with a warning
    assert main(["human", "da-batches", str(f), "--items-per-hit", "40", "--format", "json"]) == 0
    cap = capsys.readouterr()
    assert "incomplete HIT: 1 answers instead of 40" in cap.err
    out = json.loads(cap.out)["run_a"]
    assert out["ratings"] == 80
    assert out["workers_passed"] == 2


def test_run_b_needs_key(tmp_path, capsys):
    f = _batch(tmp_path / "Batch_5.csv", [("H1", "W1", _good_items(np.random.default_rng(3)))])
    assert main(["human", "da-batches", str(f), "--run-b", str(f), "--items-per-hit", "0"]) == 1
    assert "--segment-key" in capsys.readouterr().err


def test_missing_file(tmp_path, capsys):
    assert main(["human", "da-batches", str(tmp_path / "nope.csv")]) == 1
    assert "nope.csv" in capsys.readouterr().err


def test_score_not_a_number(tmp_path):
    items = _good_items(np.random.default_rng(4))
    items[2] = ("sys", "0", "REPEAT", "nan")
    f = _batch(tmp_path / "Batch_6.csv", [("H1", "W1", items)])
    with pytest.raises(AnalysisInputError, match=r"Batch_6.csv:2: column Answer.Q1, item 3 .*score 'nan' is not a number"):
        read_mturk_batches(f, items_per_hit=None)


def test_system_scores_two_ways(tmp_path):
    from mtscore.analysis.crowd.scores import segment_scores, standardize_ratings, system_scores

    # worker W1 (scores 10, 20, 30, 40; mean 25, sd 12.90994) rates A on segments 1, 1(repeat), 2
    # and B on segment 1; z-scores are exact fractions of that sd
    rows = [("H1", "W1", [("A", "1", "SYSTEM", 10), ("A", "1", "REPEAT", 20), ("A", "2", "SYSTEM", 30),
                          ("B", "1", "SYSTEM", 40)])]
    r = read_mturk_batches(_batch(tmp_path / "Batch_7.csv", rows), items_per_hit=None)
    z, _keep = standardize_ratings(r, replicate_r=False)
    sd = np.std([10, 20, 30, 40], ddof=1)
    assert np.allclose(z, (np.array([10, 20, 30, 40]) - 25) / sd)
    seg = segment_scores(r, z)
    assert seg.system.tolist() == ["A", "A", "B"]
    assert seg.n.tolist() == [2, 1, 1]
    sy = system_scores(r, z, seg)
    assert sy["system"].tolist() == ["B", "A"]
    i = sy["system"].tolist().index("A")
    assert np.isclose(sy["z"][i], (-15 - 5 + 5) / 3 / sd)              # mean over judgements
    assert np.isclose(sy["z_seg"][i], ((-15 - 5) / 2 + 5) / 2 / sd)    # mean of segment means
    assert sy["raw"][i] == 20.0
    assert sy["raw_seg"][i] == 22.5
    assert sy["n_segments"][i] == 2
