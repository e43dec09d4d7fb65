"""Campaign worker / HIT statistics (Graham et al. 2017, NLE §4): against the docqe-eacl2017
release's own QC files (``ad-hit-time.csv``, ``ad-wrkr-stats.csv``, ``ad-trk-stats.csv``) and
the DocQE paper's Table 1 counts, and on a hand-made campaign whose answer is known."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.crowd.batches import Ratings, read_mturk_batches
from mtscore.analysis.crowd.campaign_stats import campaign_stats
from mtscore.analysis.errors import AnalysisInputError
from tests.conftest import require


@pytest.fixture(scope="module")
def docqe(shared_data: Path) -> Path:
    return require(shared_data / "docqe-eacl2017")


@pytest.fixture(scope="module")
def stats(docqe):
    return {run: campaign_stats(read_mturk_batches(docqe / "batched-hits" / run)) for run in ("runA", "runB")}


def _lines(path: Path, header: bool = True) -> list[str]:
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    return lines[1:] if header else lines


@pytest.mark.parametrize("run", ["runA", "runB"])
def test_against_release_qc_files(stats, docqe, run):
    s = stats[run]
    hit_time = [ln.split("\t") for ln in _lines(docqe / run / "ad-hit-time.csv")]
    assert s.hits_submitted == len(hit_time)
    assert s.hits_rejected == sum(c[-1] == "Rejected" for c in hit_time)
    assert s.workers_rejected == len({c[1] for c in hit_time if c[-1] == "Rejected"})
    # seconds per assessment: the release's work seconds of each assignment over its 100 items
    secs = np.array([float(c[6]) for c in hit_time]) / 100
    assert s.seconds_median == pytest.approx(float(np.median(secs)), abs=1e-12)
    assert s.seconds_mean == pytest.approx(float(secs.mean()), abs=1e-12)
    # the corrected times (ad-corrected-hit-times.csv lists an assignment once per shared accept time)
    corr = {}
    for ln in _lines(docqe / run / "ad-corrected-hit-times.csv"):
        c = ln.split()
        corr[(c[0], c[1], c[6], c[7])] = float(c[-2]) / 100
    cv = np.array(list(corr.values()))
    assert len(cv) == s.hits_submitted
    assert s.corrected_seconds_median == pytest.approx(float(np.median(cv)), abs=1e-12)
    assert s.corrected_seconds_mean == pytest.approx(float(cv.mean()), abs=1e-12)
    # workers: every one is in ad-wrkr-stats.csv; the tested ones in ad-trk-stats.csv
    assert s.workers_total == len(_lines(docqe / run / "ad-wrkr-stats.csv"))
    trk = [ln.split("\t") for ln in _lines(docqe / run / "ad-trk-stats.csv", header=False)]
    assert s.workers_tested == len(trk)
    assert s.workers_passing_a == sum(float(c[1]) <= 0.05 for c in trk)


def test_docqe_printed_counts(stats):
    a, b = stats["runA"], stats["runB"]
    # the release's counts; A vs A and B (no number printed for this data, Assumption B drops 1 and 2)
    assert (a.hits_submitted, a.hits_rejected, a.workers_total, a.workers_tested) == (105, 10, 46, 44)
    assert (b.hits_submitted, b.hits_rejected, b.workers_total, b.workers_tested) == (146, 34, 47, 39)
    assert (a.workers_passing_a, a.workers_passing_ab) == (29, 28)
    assert (b.workers_passing_a, b.workers_passing_ab) == (22, 20)
    assert (a.hits_approved_a, b.hits_approved_a) == (77, 83)   # 7,700 and 8,300 judgements
    # DocQE Table 1 (its run labels swapped, evaluation notes G12): 14,600 judgements in all and
    # 6,640 SYSTEM+REPEAT after QC (repo run B), 7,700 after QC counting every type (repo run A)
    assert b.assessments_total == 14600
    assert a.assessments_kept_a == 7700
    assert round(a.share_kept_a, 3) == round(7700 / 10500, 3)
    assert round(a.seconds_median, 2) == 16.06
    assert round(b.seconds_median, 3) == 18.605


def test_docqe_system_repeat_after_qc(docqe):
    b = campaign_stats(read_mturk_batches(docqe / "batched-hits" / "runB"), item_types=("SYSTEM", "REPEAT"))
    assert b.assessments_kept_a == 6640
    assert b.assessments_total == 14600 * 80 // 100
    assert b.share_kept_a == pytest.approx(6640 / 11680, abs=1e-15)


def _campaign() -> Ratings:
    """Four workers, each HIT of 11 items: 4 SYSTEM, 4 BAD_REF of them, 3 REPEAT of the first
    three. G (two overlapping HITs) passes A and B; M passes A, fails B (its repeats rise by
    about 30); F fails A (degraded items score like their originals); R's HIT was rejected."""
    t0 = np.datetime64("2020-01-01T10:00:00", "s")
    minute = np.timedelta64(60, "s")
    spec = [  # worker, hit, accept minute, work seconds, status, sys, bad, repeat scores
        ("G", "h1", 0, 1800, "Approved", [80, 70, 60, 90], [10, 20, 15, 5], [80, 71, 59]),
        ("G", "h2", 10, 1800, "Approved", [85, 75, 65, 95], [20, 10, 5, 15], [85, 74, 66]),
        ("M", "h1", 0, 1100, "Approved", [50, 40, 45, 55], [10, 5, 0, 20], [80, 71, 74]),
        ("F", "h1", 0, 550, "Approved", [50, 60, 70, 80], [51, 58, 73, 79], [50, 60, 70]),
        ("R", "h2", 0, 110, "Rejected", [50, 50, 50, 50], [0, 0, 0, 0], [50, 50, 50]),
    ]
    rows: list[tuple] = []
    for k, (w, h, acc, secs, st, sy, bad, rep) in enumerate(spec):
        items = ([("SYSTEM", i, s) for i, s in enumerate(sy)] + [("BAD_REF", i, s) for i, s in enumerate(bad)]
                 + [("REPEAT", i, s) for i, s in enumerate(rep)])
        a = t0 + acc * minute
        for pos, (typ, seg, score) in enumerate(items):
            rows.append((w, h, f"a{k}", typ, "sysX", str(seg), "", pos, float(score), float(secs), a,
                         a + 30 * minute, st, "en", "de", "ad", 0, f"x.csv:{k + 2}"))
    cols = list(zip(*rows))
    kinds = {7: np.int64, 8: np.float64, 9: np.float64, 10: "datetime64[s]", 11: "datetime64[s]", 16: np.int64}
    arrays = [np.array(c, dtype=kinds.get(i, str)) for i, c in enumerate(cols)]
    return Ratings(*arrays)


def test_synthetic_campaign_known_answer():
    s = campaign_stats(_campaign())
    assert (s.hits_submitted, s.hits_rejected, s.hits_approved_a, s.hits_approved_ab) == (5, 1, 3, 2)
    assert (s.workers_total, s.workers_rejected, s.workers_tested) == (4, 1, 3)
    assert (s.workers_passing_a, s.workers_passing_ab) == (2, 1)
    assert (s.assessments_total, s.assessments_kept_a, s.assessments_kept_ab) == (55, 33, 22)
    assert (s.share_kept_a, s.share_kept_ab) == (0.6, 0.4)
    per_item = [1800 / 11, 1800 / 11, 100.0, 50.0, 10.0]
    assert s.seconds_median == 100.0
    assert s.seconds_mean == pytest.approx(sum(per_item) / 5, rel=1e-15)
    # G's two HITs were open at once: 900 s each after the correction
    assert s.corrected_seconds_mean == pytest.approx((2 * 900 / 11 + 160) / 5, rel=1e-15)
    assert s.corrected_seconds_median == pytest.approx(900 / 11, rel=1e-15)
    sys_only = campaign_stats(_campaign(), item_types=["SYSTEM"])
    assert (sys_only.assessments_total, sys_only.assessments_kept_a, sys_only.assessments_kept_ab) == (20, 12, 8)
    d = s.as_dict()
    assert list(d)[:2] == ["hits_submitted", "hits_rejected"]
    assert d["workers_passing_ab"] == 1


def test_empty_and_bad_options():
    empty = _campaign().select(np.zeros(55, bool))
    s = campaign_stats(empty)
    assert s.hits_submitted == 0
    assert s.workers_total == 0
    assert math.isnan(s.share_kept_a)
    assert math.isnan(s.seconds_median)
    with pytest.raises(AnalysisInputError, match="unknown item type 'SYS'"):
        campaign_stats(_campaign(), item_types=["SYS"])


def test_appraise_export(tmp_path):
    """An Appraise export: one HIT per user, its time the last end minus the first start."""
    from mtscore.analysis.crowd.batches import read_appraise_export

    rows = [",".join(["u1", "sysA", str(i), "TGT", "ces", "eng", "75", f"16000000{i}0.0", f"16000000{i}5.0"])
            for i in range(3)]
    p = tmp_path / "export.csv"
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    s = campaign_stats(read_appraise_export(p))
    assert (s.hits_submitted, s.workers_total, s.workers_tested, s.assessments_total) == (1, 1, 0, 3)
    assert s.seconds_median == pytest.approx(25 / 3, rel=1e-15)
    assert s.share_kept_a == 0.0
