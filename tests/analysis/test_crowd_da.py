"""The DA pipeline from raw Mechanical Turk batches against the docqe-eacl2017 release: worker
red flags, QC p-values and decisions, segment and document scores of each run, run A vs run B
reliability and the down-sampling curve (evaluation-methods A4-A6, A11, A12)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.crowd.batches import read_mturk_batches
from mtscore.analysis.crowd.r_numbers import r_round, signif
from mtscore.analysis.crowd.scores import da_pipeline, downsampling_curve, read_segment_key, run_correlation
from tests.conftest import require


@pytest.fixture(scope="module")
def docqe(shared_data: Path) -> Path:
    return require(shared_data / "docqe-eacl2017")


@pytest.fixture(scope="module")
def runs(docqe):
    key = read_segment_key(docqe / "seg-key-enes")
    return {run: da_pipeline(read_mturk_batches(docqe / "batched-hits" / run), key) for run in ("runA", "runB")}


def _rows(path: Path, sep=None, header=True):
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    return [ln.split(sep) for ln in (lines[1:] if header else lines)]


@pytest.mark.parametrize("run", ["runA", "runB"])
def test_qc_pvalues_and_decisions(runs, docqe, run):
    qc = runs[run].qc
    rel = {c[0]: (float(c[1]), float(c[2]), int(c[3])) for c in _rows(docqe / run / "ad-trk-stats.csv", "\t", False)}
    tested = {w: i for i, w in enumerate(qc.worker.tolist()) if qc.status[i] in ("good", "bad")}
    assert set(tested) == set(rel)            # rejected / untestable workers are not in the file
    for w, (p, t, n) in rel.items():
        i = tested[w]
        assert signif(qc.p[i]) == p, w
        assert signif(qc.t[i]) == t, w
        assert qc.n_pairs[i] == n, w
        assert (qc.status[i] == "good") == (p <= 0.05), w
    # the release keeps 29 (run A) and 22 (run B) workers
    assert int(qc.passed.sum()) == {"runA": 29, "runB": 22}[run]


@pytest.mark.parametrize("run", ["runA", "runB"])
def test_worker_red_flags(runs, docqe, run):
    ws = runs[run].workers
    idx = {w: i for i, w in enumerate(ws.worker.tolist())}
    rel = _rows(docqe / run / "ad-wrkr-stats.csv")
    assert len(rel) == len(ws.worker)
    flag = {"-": False}
    for c in rel:
        i = idx[c[0]]
        mine = [ws.hit_count[i], *r_round([ws.mean_bad_ref[i], ws.mean_system[i], ws.mean_ref[i],
                                            ws.min_hit_time[i], ws.mean_hit_time[i], ws.mean_concurrent[i]], 1),
                ws.max_concurrent[i], ws.max_const_run[i], ws.reject_rate[i]]
        assert np.array_equal(np.array(mine, float), np.array(c[1:11], float)), c[0]
        got = [ws.flag_scores[i], ws.flag_time[i], ws.flag_seq[i], ws.flag_rej[i]]
        assert got == [flag.get(x, True) for x in c[11:15]], c[0]


@pytest.mark.parametrize("run", ["runA", "runB"])
def test_corrected_hit_times(runs, docqe, run):
    h = runs[run].hits
    rel = {(c[0], c[1]): c for c in _rows(docqe / run / "ad-corrected-hit-times.csv", "\t")}
    assert len(h.hit) == len(rel)
    for j in range(len(h.hit)):
        c = rel[(h.hit[j], h.worker[j])]
        assert (h.work_seconds[j], h.concurrent[j], signif(h.corrected_seconds[j], 15), h.status[j]) == \
            (float(c[5]), int(c[8]), float(c[9]), c[10])


@pytest.mark.parametrize("run", ["runA", "runB"])
def test_segment_and_document_scores(runs, docqe, run):
    res = runs[run]
    seg = {s: i for i, s in enumerate(res.segments.segment.tolist())}
    rows = _rows(docqe / run / "seg-key-enes")
    assert len(rows) == len(seg) == 1051
    for c in rows:
        i = seg[c[3]]
        assert res.segments.document[i] == c[1]
        assert res.segments.n[i] == int(c[6])
        assert abs(res.segments.z[i] - float(c[4])) < 1e-13
        assert abs(res.segments.raw[i] - float(c[5])) < 1e-12
    docs = res.documents
    idx = {d: i for i, d in enumerate(docs.document.tolist())}
    rows = _rows(docqe / run / "doc-key-enes.csv")
    assert len(rows) == len(idx) == 62
    for c in rows:
        i = idx[c[1]]
        assert docs.n[i] == int(c[4])
        assert abs(docs.z[i] - float(c[2])) < 1e-13
        assert abs(docs.raw[i] - float(c[3])) < 1e-12


def test_counts_after_qc(runs):
    # evaluation-methods Part G 12: repo runA keeps 7,700 ratings, runB 6,640 SYSTEM+REPEAT
    a, b = runs["runA"], runs["runB"]
    assert int(a.used.sum()) == 7700
    assert int((b.used & np.isin(b.ratings.item_type, ["SYSTEM", "REPEAT"])).sum()) == 6640
    # judgements per document: 99.4 (repo runA) and 107.1 (repo runB)
    assert round(a.documents.n.mean(), 1) == 99.4
    assert round(b.documents.n.mean(), 1) == 107.1


def test_run_correlation_and_downsampling(runs):
    a, b = runs["runA"].documents, runs["runB"].documents
    r, n = run_correlation(a, b)
    assert n == 62
    assert round(r, 4) == 0.9013
    assert round(run_correlation(a, b, "raw")[0], 3) == 0.863
    curve = downsampling_curve(runs["runB"], a)
    # rows of the release's n/cor.csv (ygraham/eacl2017): min repeats, mean per document, r
    golden = {0: (1, 2.10526315789474, 0.478848799917178), 12: (1, 16.7741935483871, 0.834254254812921),
              13: (3, 18.0645161290323, 0.826223380634285), 30: (9, 40.0, 0.817244687834766),
              82: (27, 107.09677419354839, 0.90129167)}
    assert len(curve["r"]) == 83
    for k, (mn, mean, rr) in golden.items():
        assert curve["min_n"][k] == mn
        assert abs(curve["mean_n"][k] - mean) < 1e-9
        assert abs(curve["r"][k] - rr) < 1e-8


def test_uncorrected_quirks_mode(docqe, runs):
    # without the R quirks F0006 (run B) has 6 HITs, not 8 (two shared an accept time)
    res = da_pipeline(read_mturk_batches(docqe / "batched-hits" / "runB"), replicate_r=False)
    i = int(np.flatnonzero(res.workers.worker == "F0006")[0])
    assert res.workers.hit_count[i] == 6
    j = int(np.flatnonzero(runs["runB"].workers.worker == "F0006")[0])
    assert runs["runB"].workers.hit_count[j] == 8
    # unrounded mean/SD move segment z-scores by less than 1e-5, never more
    d = np.abs(res.segments.z - runs["runB"].segments.z)
    assert 0 < d.max() < 1e-5


def test_cli_da_batches(docqe, capsys):
    import json

    from mtscore.bindings.cli.analysis import main

    hits = docqe / "batched-hits"
    assert main(["human", "da-batches", str(hits / "runA"), "--run-b", str(hits / "runB"),
                 "--segment-key", str(docqe / "seg-key-enes"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(out["reliability"]["r_z"], 4) == 0.9013
    assert out["reliability"]["documents"] == 62
    assert len(out["reliability"]["downsampling"]["r"]) == 83
    assert out["run_a"]["workers_passed"] == 29
    assert out["run_b"]["ratings_used"] == 8300


@pytest.mark.parametrize("run", ["runA", "runB"])
def test_release_files_written_byte_for_byte(runs, docqe, run, tmp_path):
    """Every line of the five per-run files equals the release's, both runs. The segment and
    document keys are byte-identical files; the three QC files list the same lines in another
    order (the scripts' worker order). Run B's last 7 lines (6 segments of the HIT with
    Input.hit 1 and one document, 1-2 units higher in the 15th digit) needed perl's pre-5.30
    atof for the worker mean/SD (see test_perl_atof)."""
    from collections import Counter

    from mtscore.analysis.crowd.release_files import write_release_files

    key = read_segment_key(docqe / "seg-key-enes")
    paths = write_release_files(runs[run], tmp_path, key)
    assert sorted(p.name for p in paths) == sorted(["ad-trk-stats.csv", "ad-wrkr-stats.csv", "seg-key-enes",
                                                     "ad-corrected-hit-times.csv", "doc-key-enes.csv"])
    for p in paths:
        mine, rel = p.read_bytes(), (docqe / run / p.name).read_bytes()
        if p.name in ("seg-key-enes", "doc-key-enes.csv"):
            assert mine == rel, p.name
        else:
            assert Counter(mine.splitlines()) == Counter(rel.splitlines()), p.name


def test_perl_atof():
    from mtscore.analysis.crowd.r_numbers import perl_atof

    # the R-printed SD of run B's F0007: perl < 5.30 reads 27 + 40367/1e5, one ulp low; the
    # correctly rounded 27.40367 gives 15 of its z-scores 1 unit higher in the 15th digit
    assert perl_atof("27.40367") == np.nextafter(27.40367, 0) != 27.40367
    assert perl_atof("23.95181") == np.nextafter(23.95181, 99)      # run A's F0044 (failed QC)
    assert perl_atof("74.78") == 74.78
    assert perl_atof("-0.5") == -0.5
    assert perl_atof("12") == 12.0
    assert perl_atof("1.5e-3") == 1.5 / 1000
    assert perl_atof("2e+05") == 2e5
    assert np.isnan(perl_atof("NaN"))
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 100, 20000)
    txt = [f"{v:.7g}" for v in x]
    got = np.array([perl_atof(t) for t in txt])
    ref = np.array([float(t) for t in txt])
    ulp = np.abs(got - ref) / np.spacing(ref)
    assert ulp.max() == 1
    assert 0 < int((ulp > 0).sum()) < 0.05 * x.size


def test_figures(runs, tmp_path):
    pytest.importorskip("matplotlib")
    from mtscore.analysis.plots import downsampling_plot, worker_means_plot

    curve = {"mean_n": np.array([2.1, 3.0, 4.1]), "min_n": np.array([1, 1, 3]), "r": np.array([0.48, 0.38, 0.57])}
    png = downsampling_plot(curve, path=str(tmp_path / "d.png"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "d.png").read_bytes() == png
    res = runs["runA"]
    assert worker_means_plot(res.workers, res.qc)[:4] == b"\x89PNG"


def test_r_number_reading():
    from mtscore.analysis.crowd.r_numbers import r_print_read, r_read

    # R_strtod's long-double reading is not always the correctly rounded double
    assert r_read("0.1") == 0.1
    assert r_read("-2.5e-07") == -2.5e-07
    assert r_read("1e+05") == 1e5
    rng = np.random.default_rng(0)
    x = rng.normal(0, 2, 3000)
    bulk = r_print_read(x)
    assert np.array_equal(bulk, [r_read(f"{v:.15g}") for v in x])
    assert np.abs(bulk - x).max() < 1e-14 * np.abs(x).max()
    # about 2 in 10,000 15-digit values read differently from the correctly rounded double
    y = rng.normal(0, 2, 100000)
    assert 0 < int((r_print_read(y) != np.array([float(f"{v:.15g}") for v in y])).sum()) < 100
