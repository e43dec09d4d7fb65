"""mtscore.analysis.metaeval on released data (WMT20 / WMT21 from MTSCORE_DATA) against
mt-metrics-eval, and the MQM-style standalone ratings format."""
import json

import numpy as np
import pytest
from conftest import require
from metaeval_oracle import oracle

from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.metaeval import (
    kendall_variant,
    pairwise_permutation_test,
    read_mqm_ratings,
    soft_pairwise_accuracy,
    tie_calibrated_accuracy,
)
from mtscore.analysis.metaeval.wmt import wmt20_seg_task, wmt21_seg_task

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def mme():
    return oracle()


@pytest.fixture(scope="module")
def w20(shared_data):
    return wmt20_seg_task(require(shared_data / "wmt20-metrics"), "en-de", metrics=("chrF", "TER", "YiSi-2"))


def _corr(mme, h, m):
    gold = [None if np.isnan(x) else float(x) for x in h.ravel()]
    return mme.stats.Correlation(h.shape[0], gold, [float(x) for x in m.ravel()])


def test_wmt20_seg_task_shape(w20):
    S, N = w20.human.shape
    assert w20.metrics.shape == (3, S, N)
    assert S >= 7
    assert N > 500
    assert not any(s.startswith("Human") for s in w20.systems)
    assert np.isfinite(w20.metrics[:, ~np.isnan(w20.human)]).all()


def test_wmt20_acc_eq_and_kendall_equal_oracle(mme, w20):
    for i, m in enumerate(w20.metrics[:2]):
        c = _corr(mme, w20.human, m)
        want = mme.stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "acc23", c.num_sys, "item", 1.0)
        got = tie_calibrated_accuracy(w20.human, m, "acc23", "item")
        assert (got.value, got.epsilon) == (want[0], want[1])
        if i == 0:
            assert kendall_variant(w20.human, m, "b", "none") == c.KendallVariants("none", "b")[0]
    assert 0.4 < got.value < 0.7


def test_wmt20_pairs_permutation_equals_oracle(mme, w20):
    h, (m1, m2) = w20.human, w20.metrics[:2]
    sub = np.s_[:, :120]                                # a slice keeps the oracle run short
    c1, c2 = _corr(mme, h[sub], m1[sub]), _corr(mme, h[sub], m2[sub])
    psd = mme.stats.PermutationSigDiffParams(20, 0.02, 0.5)
    np.random.seed(8)
    p, delta, used, _ = mme.stats.PairwisePermutationSigDiff(c1, c2, "acc23", "item", 60, psd)
    np.random.seed(8)
    r = pairwise_permutation_test(h[sub], m1[sub], m2[sub], "acc23", "item", k=60, block_size=20, stream="legacy")
    assert (r.p_value, r.delta, r.n_draws) == (p, delta, used)


def test_wmt21_seg_task_and_soft_accuracy(mme, shared_data):
    # identity doc ids (sorted order = line order): this tests the statistic against
    # mt-metrics-eval on the same numbers as before, not the SID join (test_wmt21_docids.py)
    t = wmt21_seg_task(require(shared_data / "wmt21-news-systems"), "is-en", metrics=("chrF",),
                       docids=[f"d{i:04d}" for i in range(1000)])
    S, N = t.human.shape
    assert t.metrics.shape == (1, S, N)
    assert N == 1000
    assert S >= 8
    # soft pairwise accuracy needs complete segments: those every system has a DA score for
    full = ~np.isnan(t.human).any(axis=0)
    h, m = t.human[:, full], t.metrics[0][:, full]
    c = mme.stats.Correlation(S, list(h.ravel()), list(m.ravel()))
    assert soft_pairwise_accuracy(h, m) == c.PairwiseConfidenceError()[0]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _rating(sys_id, seg, errors, rater="r1"):
    return {"source": "s", "hypothesis": "h", "errors": errors, "segment_id": seg, "system_id": sys_id,
            "rater_id": rater, "document_id": "d", "src_lang": "en", "tgt_lang": "de"}


def _err(severity, category):
    return {"start": 0, "end": 1, "category": category, "severity": severity}


def test_mqm_ratings_scores(tmp_path):
    p = tmp_path / "ratings.jsonl"
    _write(p, [
        _rating("B", 0, [_err("Major", "Accuracy/Mistranslation"), _err("Minor", "Fluency/Punctuation")]),
        _rating("B", 0, [_err("minor", "Fluency/Grammar")], rater="r2"),
        _rating("A", 1, [_err("Major", "Non-translation!")]),
        _rating("A", 0, []),
        _rating("B", 2, [_err("Neutral", "Other"), _err("Critical", "Accuracy")]),
    ])
    r = read_mqm_ratings(p)
    assert r.systems == ["A", "B"]
    np.testing.assert_array_equal(r.raters, [[1, 1, 0], [2, 0, 1]])
    assert r.scores[0, 0] == 0.0
    assert r.scores[0, 1] == -25.0
    assert np.isnan(r.scores[0, 2])
    assert r.scores[1, 0] == pytest.approx(-(5.1 + 1.0) / 2)
    assert r.scores[1, 2] == 0.0                       # unknown severity: weight 0, like score_mqm
    r = read_mqm_ratings(p, weights={"major": 5, "minor": 1, "critical": 10}, systems=["B", "A"], n_segments=4)
    assert r.scores.shape == (2, 4)
    assert r.scores[0, 2] == -10.0
    assert r.scores[0, 0] == -3.5


def test_mqm_ratings_errors_name_file_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    _write(p, [_rating("A", 0, []), _rating("A", 0, [])])
    with pytest.raises(AnalysisInputError, match=r"bad.jsonl:2: rater r1 already rated"):
        read_mqm_ratings(p)
    p.write_text('{"system_id": "A", "segment_id": "x", "errors": []}\n', encoding="utf-8")
    with pytest.raises(AnalysisInputError, match=r"bad.jsonl:1: field 'segment_id' must be a int"):
        read_mqm_ratings(p)
    p.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(AnalysisInputError, match=r"bad.jsonl:1: not a JSON object"):
        read_mqm_ratings(p)
    with pytest.raises(AnalysisInputError, match="cannot read"):
        read_mqm_ratings(tmp_path / "missing.jsonl")


def test_cli_meta_seg(shared_data, w20, tmp_path, capsys):
    from mtscore.analysis.metaeval import compare_metrics
    from mtscore.bindings.cli.analysis import main

    data = require(shared_data / "wmt20-metrics")
    out = tmp_path / "res.json"
    rc = main(["meta", "seg", "--data", str(data), "--release", "wmt20", "--lp", "en-de", "--metrics",
               "chrF,TER,YiSi-2", "--k", "40", "--block", "20", "--seed", "3", "--format", "json", "-o", str(out)])
    assert rc == 0
    got = json.loads(out.read_text())
    want = compare_metrics(w20.human, w20.metrics, w20.metric_names, "acc_eq", k=40, block_size=20,
                           average_by="item", seed=3)
    assert [m["metric"] for m in got["metrics"]] == want.names
    assert [m["value"] for m in got["metrics"]] == want.values.tolist()
    assert [m["rank"] for m in got["metrics"]] == want.ranks.tolist()
    assert got["sig_matrix"] == want.sig_matrix.tolist()
    rc = main(["meta", "seg", "--data", str(tmp_path), "--release", "wmt20", "--lp", "en-de", "--k", "0"])
    assert rc == 1
    assert "error" in capsys.readouterr().err


def test_mqm_ratings_meta_evaluation_equals_oracle(mme, tmp_path):
    """MQM scores tie a lot (0 = no error): tie calibration on ratings read from the standalone
    format, and the pairs permutation test, equal the reference."""
    rng = np.random.default_rng(21)
    systems, n_seg = ["sysA", "sysB", "sysC", "sysD"], 25
    quality = rng.normal(size=(4, n_seg))
    rows = []
    for s, name in enumerate(systems):
        for g in range(n_seg):
            if rng.random() < 0.1:
                continue                               # unrated segment
            n_err = rng.poisson(max(0.0, 1.0 - quality[s, g]))
            errs = [_err(rng.choice(["Major", "Minor"]), rng.choice(["Accuracy/Mistranslation", "Fluency/Grammar"]))
                    for _ in range(n_err)]
            rows.append(_rating(name, g, errs))
    path = tmp_path / "mqm.jsonl"
    _write(path, rows)
    mqm = read_mqm_ratings(path)
    assert mqm.systems == systems
    assert mqm.scores.shape == (4, n_seg)
    metric = np.round(quality + 0.7 * rng.normal(size=quality.shape), 1)
    metric2 = np.round(quality + 0.9 * rng.normal(size=quality.shape), 1)
    c = _corr(mme, mqm.scores, metric)
    want = mme.stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "acc23", 4, "item", 1.0)
    got = tie_calibrated_accuracy(mqm.scores, metric, "acc23", "item")
    assert (got.value, got.epsilon) == (want[0], want[1])
    assert got.epsilon > 0
    c2 = _corr(mme, mqm.scores, metric2)
    psd = mme.stats.PermutationSigDiffParams(25, 0.02, 0.5)
    np.random.seed(9)
    p, delta, used, _ = mme.stats.PairwisePermutationSigDiff(c2, c, "acc23", "item", 100, psd)
    np.random.seed(9)
    r = pairwise_permutation_test(mqm.scores, metric2, metric, "acc23", "item", k=100, block_size=25, stream="legacy")
    assert (r.p_value, r.delta, r.n_draws) == (p, delta, used)


def test_cli_meta_seg_on_mqm_ratings(tmp_path, capsys):
    from mtscore.analysis.metaeval import compare_metrics
    from mtscore.analysis.metaeval.ratings import read_score_file
    from mtscore.bindings.cli.analysis import main

    rng = np.random.default_rng(22)
    systems, n_seg = ["a", "b", "c"], 12
    q = rng.normal(size=(3, n_seg))
    rows = [_rating(s, g, [_err("Major", "Accuracy")] * int(q[i, g] < -0.5) + [_err("Minor", "Style")] * int(q[i, g] < 0.5))
            for i, s in enumerate(systems) for g in range(n_seg)]
    ratings = tmp_path / "mqm.jsonl"
    _write(ratings, rows)
    files = []
    for name, noise in (("good", 0.3), ("bad", 1.5)):
        f = tmp_path / f"{name}.seg.score"
        m = q + noise * rng.normal(size=q.shape)
        f.write_text("".join(f"{s}\t{float(m[i, g])!r}\n" for i, s in enumerate(systems) for g in range(n_seg)))
        files.append(f"{name}={f}")
    out = tmp_path / "res.csv"
    rc = main(["meta", "seg", "--release", "mqm", "--data", str(ratings), "--metrics", ",".join(files), "--k", "50",
               "--block", "50", "--seed", "1", "--format", "csv", "-o", str(out)])
    assert rc == 0
    mqm = read_mqm_ratings(ratings)
    M = np.stack([read_score_file(f.split("=", 1)[1], systems, n_seg) for f in files])
    want = compare_metrics(mqm.scores, M, ["good", "bad"], "acc_eq", average_by="item", k=50, block_size=50, seed=1)
    lines = out.read_text().splitlines()
    assert lines[0] == "metric,value,rank,epsilon"
    assert [ln.split(",")[0] for ln in lines[1:]] == want.names
    assert [float(ln.split(",")[1]) for ln in lines[1:]] == want.values.tolist()
    bad = tmp_path / "short.seg.score"
    bad.write_text("a 0.1\n")
    rc = main(["meta", "seg", "--release", "mqm", "--data", str(ratings), "--metrics", f"x={bad}", "--k", "0"])
    assert rc == 1
    assert "short.seg.score: system a has 1 scores" in capsys.readouterr().err
