"""Reading raw crowd batches (Mechanical Turk layout of the docqe-eacl2017 release) and bad input."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.crowd.batches import read_mturk_batches
from mtscore.analysis.errors import AnalysisInputError
from tests.conftest import require


@pytest.fixture(scope="module")
def docqe(shared_data: Path) -> Path:
    return require(shared_data / "docqe-eacl2017" / "batched-hits")


def test_mturk_runs_counts(docqe):
    # DocQE Table 1 as the release has it (evaluation-methods Part G 12): 10,500 and 14,600 judgements
    a = read_mturk_batches(docqe / "runA")
    b = read_mturk_batches(docqe / "runB")
    assert len(a) == 10500
    assert len(b) == 14600
    assert Counter(a.item_type.tolist()) == {"SYSTEM": 7350, "REF": 1050, "REPEAT": 1050, "BAD_REF": 1050}
    assert Counter(b.status.tolist()) == {"Submitted": 8900, "Rejected": 3400, "Approved": 2300}
    assert len(np.unique(a.assignment)) == 105
    assert len(np.unique(b.assignment)) == 146
    assert a.skipped == ()
    assert b.skipped == ()
    # first assignment of runA, first answer item: all_784_REF_0__71, 671 work seconds
    assert (a.worker[0], a.item_type[0], a.segment[0], a.position[0], a.score[0], a.time[0]) == \
        ("F0028", "REF", "784", 0, 71.0, 671.0)
    assert str(a.accept[0]) == "2016-11-21T08:26:47"
    # two runB records are glued onto the comment before them (comment typed with Enter):
    # they are split again, so F0013's and F0027's assignments both count
    glued = b.select(b.assignment == "3X73LLYYQ2AZFEES3DMRPHQQJ45NHC")
    assert len(glued) == 100
    assert set(glued.worker.tolist()) == {"F0027"}
    assert glued.time[0] == 1451.0


def _to_appraise(r, path: Path) -> Path:
    """Write a Ratings table as an Appraise ExportSystemScoresToCSV --batch-info file."""
    import csv

    back = {"SYSTEM": "TGT", "REPEAT": "CHK", "BAD_REF": "BAD", "REF": "REF"}
    hit_no = {h: i for i, h in enumerate(dict.fromkeys(r.assignment.tolist()))}
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        for i in range(len(r)):
            start = float(r.accept[i].astype("int64")) + 10 * int(r.position[i])
            w.writerow([r.worker[i], r.system[i], r.segment[i], back[str(r.item_type[i])], "eng", "spa",
                        int(r.score[i]), start, start + 9.5, hit_no[r.assignment[i]], i])
    return path


def test_appraise_round_trip_reproduces_release_qc(docqe, tmp_path):
    from mtscore.analysis.crowd.batches import read_appraise_export
    from mtscore.analysis.crowd.qc import hit_stats, qc_workers, worker_stats
    from mtscore.analysis.crowd.r_numbers import signif

    a = read_mturk_batches(docqe / "runA")
    ap = read_appraise_export(_to_appraise(a, tmp_path / "export.csv"))
    assert len(ap) == len(a)
    assert Counter(ap.item_type.tolist()) == Counter(a.item_type.tolist())
    assert (ap.time == 1000 - 10 + 9.5).all()          # 100 items, 10 s apart, 9.5 s the last
    qc = qc_workers(ap, worker_stats(ap, hit_stats(ap)))
    rel = {}
    for ln in (docqe.parent / "runA" / "ad-trk-stats.csv").read_text().splitlines():
        c = ln.split("\t")
        rel[c[0]] = (float(c[1]), int(c[3]))
    for w, (p, n) in rel.items():
        i = int(np.flatnonzero(qc.worker == w)[0])
        assert signif(qc.p[i]) == p
        assert qc.n_pairs[i] == n


def test_appraise_document_layout_and_errors(tmp_path):
    from mtscore.analysis.crowd.batches import read_appraise_export

    f = tmp_path / "doc.csv"
    f.write_text("username,system,item,type,src,tgt,score,doc,complete,start,end\n"
                 "u1,sysA,1,TGT,eng,deu,70,d1,False,100.0,104.0\n"
                 "u1,sysA,2,BAD,eng,deu,20,d1,False,90.0,95.5\n"
                 "u1,sysA,d1,TGT,eng,deu,65,d1,True,106.0,110.0\n")
    r = read_appraise_export(f)
    assert r.item_type.tolist() == ["BAD_REF", "SYSTEM"]        # presentation (start time) order
    assert r.document.tolist() == ["d1", "d1"]
    assert r.position.tolist() == [0, 1]
    assert r.time.tolist() == [14.0, 14.0]
    assert r.hit.tolist() == ["-", "-"]
    assert len(r.skipped) == 1
    assert "1 whole-document ratings" in r.skipped[0]
    f.write_text("u1,sysA,1,XYZ,eng,deu,70,100.0,104.0\n")
    with pytest.raises(AnalysisInputError, match=r"doc.csv:1: item type 'XYZ'"):
        read_appraise_export(f)
    f.write_text("u1,sysA,1,TGT,eng,deu,170,100.0,104.0\n")
    with pytest.raises(AnalysisInputError, match=r"score '170' is outside the scale \[0, 100\]"):
        read_appraise_export(f)
    f.write_text("u1,sysA,1,TGT,eng,deu,70\n")
    with pytest.raises(AnalysisInputError, match="7 cells; an Appraise segment export row has 9 or 11"):
        read_appraise_export(f)


def _names(min_size=1):
    from hypothesis import strategies as st

    # any Unicode (quotes, commas, newlines, underscores, RTL, astral) except the answer
    # separator "|", a "__" (the score marker) or blanks at the ends, which the HIT layout
    # cannot carry
    return st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="|\x00"),
                   min_size=min_size, max_size=12).filter(
        lambda s: "__" not in s and s == s.strip() and not s.startswith("_") and not s.endswith("_")
        and "\r" not in s and "\n" not in s)


def test_mturk_reader_round_trips_adversarial_names():
    import csv
    import tempfile

    from hypothesis import given, settings
    from hypothesis import strategies as st

    seg = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="|_\x00\r\n"),
                  min_size=1, max_size=6).filter(lambda s: s == s.strip())
    item = st.tuples(_names(), seg, st.sampled_from(["SYSTEM", "REPEAT", "REF", "BAD_REF"]),
                     st.integers(0, 100))
    header = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime", "SubmitTime",
              "WorkTimeInSeconds", "Answer.Q1", "Answer.comments"]

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(_names(), st.lists(item, min_size=1, max_size=8)), min_size=1, max_size=4),
           _names(0))
    def check(assignments, comment):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "Batch_1.csv"
            with path.open("w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh, quoting=csv.QUOTE_ALL)
                w.writerow(header)
                for k, (worker, items) in enumerate(assignments):
                    ans = "|".join(f"{s}_{g}_{t}_{i}__{sc}" for i, (s, g, t, sc) in enumerate(items))
                    w.writerow([f"H{k}", f"A{k}", worker, "Submitted", "Wed Nov 23 10:00:00 PST 2016",
                                "Wed Nov 23 10:30:00 PST 2016", "600", ans, comment])
            r = read_mturk_batches(path, items_per_hit=None)
        flat = [(wk, it) for wk, items in assignments for it in items]
        assert r.worker.tolist() == [wk for wk, _ in flat]
        assert r.system.tolist() == [it[0] for _, it in flat]
        assert r.segment.tolist() == [it[1] for _, it in flat]
        assert r.item_type.tolist() == [it[2] for _, it in flat]
        assert r.score.tolist() == [float(it[3]) for _, it in flat]

    check()


def test_appraise_through_cli(docqe, tmp_path, capsys):
    import json

    from mtscore.bindings.cli.analysis import main

    a = read_mturk_batches(docqe / "runA")
    f = _to_appraise(a, tmp_path / "export.csv")
    assert main(["human", "da-batches", str(f), "--input-format", "appraise", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)["run_a"]
    # Appraise has no rejections: every worker is tested, the release's 29 good ones among them
    assert out["ratings"] == 10500
    assert out["workers_passed"] >= 29


@pytest.mark.parametrize(("answer", "kept"), [
    ("undefined_7_SYSTEM_0__55|B_8_REF_1__60", True),       # a system named 'undefined' is a system
    ("A_7_SYSTEM_0__55|my-undefined-sys_8_REF_1__60", True),
    ("A_7_SYSTEM_0__55|undefined", False),                  # JavaScript's undefined: image not loaded
    ("A_7_SYSTEM_0__undefined|B_8_REF_1__60", False),       # ... as an item's score
])
def test_an_undefined_answer_item_leaves_the_assignment_out(tmp_path, answer, kept):
    import csv
    import warnings

    path = tmp_path / "Batch_1.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime", "SubmitTime",
                    "WorkTimeInSeconds", "Answer.Q1", "Answer.comments"])
        for k, ans in enumerate([answer, "C_9_SYSTEM_0__70"]):
            w.writerow([f"H{k}", f"A{k}", f"W{k}", "Submitted", "Wed Nov 23 10:00:00 PST 2016",
                        "Wed Nov 23 10:30:00 PST 2016", "600", ans, ""])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = read_mturk_batches(path, items_per_hit=None)
    assert r.worker.tolist() == (["W0", "W0"] if kept else []) + ["W1"]
