"""Reading raw crowd batches (Mechanical Turk layout of the docqe-eacl2017 release) and bad input."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.crowd import read_mturk_batches
from mtscore.analysis.errors import AnalysisInputError
from tests.conftest import require


@pytest.fixture(scope="module")
def docqe(shared_data: Path) -> Path:
    return require(shared_data / "docqe-eacl2017" / "batched-hits")


def test_mturk_runs_counts(docqe):
    # DocQE Table 1 as the release has it (evaluation-methods Part G 12): 10,500 and 14,600 judgements
    a = read_mturk_batches(docqe / "runA")
    b = read_mturk_batches(docqe / "runB")
    assert len(a) == 10500 and len(b) == 14600
    assert Counter(a.item_type.tolist()) == {"SYSTEM": 7350, "REF": 1050, "REPEAT": 1050, "BAD_REF": 1050}
    assert Counter(b.status.tolist()) == {"Submitted": 8900, "Rejected": 3400, "Approved": 2300}
    assert len(np.unique(a.assignment)) == 105 and len(np.unique(b.assignment)) == 146
    assert a.skipped == () and b.skipped == ()
    # first assignment of runA, first answer item: all_784_REF_0__71, 671 work seconds
    assert (a.worker[0], a.item_type[0], a.segment[0], a.position[0], a.score[0], a.time[0]) == \
        ("F0028", "REF", "784", 0, 71.0, 671.0)
    assert str(a.accept[0]) == "2016-11-21T08:26:47"
    # two runB records are glued onto the comment before them (comment typed with Enter):
    # they are split again, so F0013's and F0027's assignments both count
    glued = b.select(b.assignment == "3X73LLYYQ2AZFEES3DMRPHQQJ45NHC")
    assert len(glued) == 100 and set(glued.worker.tolist()) == {"F0027"}
    assert glued.time[0] == 1451.0


def _to_appraise(r, path: Path, document_layout: bool = False) -> Path:
    """Write a Ratings table as an Appraise ExportSystemScoresToCSV --batch-info file."""
    import csv

    back = {"SYSTEM": "TGT", "REPEAT": "CHK", "BAD_REF": "BAD", "REF": "REF"}
    hit_no = {h: i for i, h in enumerate(dict.fromkeys(r.assignment.tolist()))}
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        for i in range(len(r)):
            start = float(r.accept[i].astype("int64")) + 10 * int(r.position[i])
            doc = [f"doc{int(r.segment[i]) // 17}", "False"] if document_layout else []
            w.writerow([r.worker[i], r.system[i], r.segment[i], back[str(r.item_type[i])], "eng", "spa",
                        int(r.score[i]), *doc, start, start + 9.5, hit_no[r.assignment[i]], i])
    return path


def test_appraise_round_trip_reproduces_release_qc(docqe, tmp_path):
    from mtscore.analysis.crowd import read_appraise_export
    from mtscore.analysis.crowd_qc import hit_stats, qc_workers, signif, worker_stats

    a = read_mturk_batches(docqe / "runA")
    ap = read_appraise_export(_to_appraise(a, tmp_path / "export.csv"))
    assert len(ap) == len(a) and Counter(ap.item_type.tolist()) == Counter(a.item_type.tolist())
    assert (ap.time == 1000 - 10 + 9.5).all()          # 100 items, 10 s apart, 9.5 s the last
    qc = qc_workers(ap, worker_stats(ap, hit_stats(ap)))
    rel = {}
    for ln in (docqe.parent / "runA" / "ad-trk-stats.csv").read_text().splitlines():
        c = ln.split("\t")
        rel[c[0]] = (float(c[1]), int(c[3]))
    for w, (p, n) in rel.items():
        i = int(np.flatnonzero(qc.worker == w)[0])
        assert signif(qc.p[i]) == p and qc.n_pairs[i] == n


def test_appraise_document_layout_and_errors(tmp_path):
    from mtscore.analysis.crowd import read_appraise_export

    f = tmp_path / "doc.csv"
    f.write_text("username,system,item,type,src,tgt,score,doc,complete,start,end\n"
                 "u1,sysA,1,TGT,eng,deu,70,d1,False,100.0,104.0\n"
                 "u1,sysA,2,BAD,eng,deu,20,d1,False,90.0,95.5\n"
                 "u1,sysA,d1,TGT,eng,deu,65,d1,True,106.0,110.0\n")
    r = read_appraise_export(f)
    assert r.item_type.tolist() == ["BAD_REF", "SYSTEM"]        # presentation (start time) order
    assert r.document.tolist() == ["d1", "d1"] and r.position.tolist() == [0, 1]
    assert r.time.tolist() == [14.0, 14.0] and r.hit.tolist() == ["-", "-"]
    assert len(r.skipped) == 1 and "1 whole-document ratings" in r.skipped[0]
    f.write_text("u1,sysA,1,XYZ,eng,deu,70,100.0,104.0\n")
    with pytest.raises(AnalysisInputError, match="doc.csv:1: item type 'XYZ'"):
        read_appraise_export(f)
    f.write_text("u1,sysA,1,TGT,eng,deu,170,100.0,104.0\n")
    with pytest.raises(AnalysisInputError, match=r"score '170' is outside the scale \[0, 100\]"):
        read_appraise_export(f)
    f.write_text("u1,sysA,1,TGT,eng,deu,70\n")
    with pytest.raises(AnalysisInputError, match="7 cells; an Appraise segment export row has 9 or 11"):
        read_appraise_export(f)
