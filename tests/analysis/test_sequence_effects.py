"""Sequence effects C4-C6 (Thesis Ch. 4) on simulated crowds whose true parameters are known,
with numpy/scipy-free references (closed-form Welch, a plain optimiser for the logistic fit)."""
import math

import numpy as np
import pytest

from mtscore.analysis import human
from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.human.sequence_effects import (
    binary_worker_subsets,
    lagged_pairs,
    sequence_bins,
    sequence_logistic,
    sequence_pooled,
    welch_test,
    worker_gold_correlation,
)


def simulate(n_hits=30, n_items=100, n_workers=10, beta1=0.2, beta2=0.7, sigma=0.6, n_aspects=1, seed=0,
             worker_sigma=None):
    """Every worker of a HIT sees its items in one order; aspects interleave (item t has aspect
    t % n_aspects) and the lag is the previous response to the same aspect:
    y_t = beta1 * y_prev + beta2 * gold_t + N(0, sigma_w^2)."""
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n_hits):
        gold = rng.standard_normal(n_items)
        for w in range(n_workers):
            sd = sigma if worker_sigma is None else worker_sigma[(h * n_workers + w) % len(worker_sigma)]
            last = {}
            for t in range(n_items):
                a = t % n_aspects
                y = beta1 * last.get(a, 0.0) + beta2 * gold[t] + rng.normal(0, sd)
                last[a] = y
                rows.append((f"w{h}-{w}", h, t, y, gold[t], a))
    wk, hit, pos, y, g, a = map(np.array, zip(*rows))
    return {"worker": wk, "hit": hit, "position": pos, "score": y, "gold": g, "aspect": a}


def test_welch_against_closed_form_and_scipy():
    from scipy.stats import ttest_ind

    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 1, 40), rng.normal(0, 2, 25)
    t, dof, p = welch_test(a, b)
    va, vb = a.var(ddof=1) / 40, b.var(ddof=1) / 25
    assert t == pytest.approx((a.mean() - b.mean()) / math.sqrt(va + vb), rel=1e-12)
    assert dof == pytest.approx((va + vb) ** 2 / (va ** 2 / 39 + vb ** 2 / 24), rel=1e-12)
    assert p == pytest.approx(ttest_ind(a, b, equal_var=False).pvalue, rel=1e-10)
    assert all(math.isnan(v) for v in welch_test([1.0], [2.0, 3.0]))
    assert all(math.isnan(v) for v in welch_test([1.0, 1.0], [2.0, 2.0]))


def test_c4_bins_recover_the_carry_over():
    """With y_t = b1 y_(t-1) + b2 gold_t + e, E[y_t | previous gold] = b1 b2 prev_gold, so
    High - Low = b1 b2 (mean previous gold of High - of Low); with b1 = 0 it is 0."""
    for beta1 in (0.25, 0.0):
        d = simulate(beta1=beta1, seed=2)
        res = sequence_bins(d["worker"], d["hit"], d["position"], d["score"], d["gold"], n_workers=(1, 5, 10))
        slot_gold = d["gold"].reshape(30, 10, 100)[:, 0, :]
        prev = slot_gold[:, :-1].ravel()
        hi, lo = prev[prev >= res["edges"][2]].mean(), prev[prev < res["edges"][1]].mean()
        expected = beta1 * 0.7 * (hi - lo)
        print(beta1, res["high_minus_low"], expected, res["welch_p"], res["n_items"][0])
        se = np.abs(res["high_minus_low"] / res["welch_t"])
        assert np.all(np.abs(res["high_minus_low"] - expected) < 4 * se)
        assert res["n_items"][0].sum() == 30 * 99
        assert abs(res["n_items"][0, 0] - 990) <= 1
        if beta1:
            assert np.all(res["welch_p"] < 1e-3)
            assert np.all(res["high_minus_low"] > 0.15)
        else:
            assert np.all(res["welch_p"] > 1e-3)
    # at N = 1 averaging is a random single draw: the overall mean is the mean of one rating per item
    assert abs(res["mean_all"][0] - d["score"].mean()) < 0.1


def test_c4_bad_input():
    d = simulate(n_hits=2, n_items=5, n_workers=3)
    with pytest.raises(AnalysisInputError, match="gold"):
        sequence_bins(d["worker"], d["hit"], d["position"], d["score"], d["gold"][:-1])
    g = d["gold"].copy()
    g[3] = np.nan
    with pytest.raises(AnalysisInputError, match="not finite"):
        sequence_bins(d["worker"], d["hit"], d["position"], d["score"], g)
    with pytest.raises(AnalysisInputError, match="at least 1"):
        sequence_bins(d["worker"], d["hit"], d["position"], d["score"], d["gold"], n_workers=(0,))
    res = sequence_bins(d["worker"], d["hit"], d["position"], d["score"], d["gold"], n_workers=(4,))
    assert np.isnan(res["high_minus_low"][0])
    assert res["n_items"].sum() == 0


def test_c6_pooled_regression_recovers_parameters():
    sig = np.linspace(0.3, 1.5, 7)  # worker quality varies; it does not change the mean response
    d = simulate(n_hits=20, n_items=70, n_workers=8, beta1=0.15, beta2=0.6, n_aspects=7, seed=4, worker_sigma=sig)
    res = sequence_pooled(d["worker"], d["hit"], d["position"], d["score"], d["gold"], aspect=d["aspect"])
    print(res)
    for name, true in (("lag", 0.15), ("gold", 0.6), ("worker_corr", 0.0)):
        coef, se, _p = res[name]
        assert abs(coef - true) < 3.5 * se, (name, coef, se)
    assert res["lag"][2] < 1e-6
    # ignoring the aspects takes the wrong lag (the previous, different aspect): no effect left
    wrong = sequence_pooled(d["worker"], d["hit"], d["position"], d["score"], d["gold"])
    assert abs(wrong["lag"][0]) < 3.5 * wrong["lag"][1]
    # without aspects and worker covariate it is eq. 4.1, as human.sequence_effect fits it
    base = sequence_pooled(d["worker"], d["hit"], d["position"], d["score"], d["gold"], worker_covariate=False)
    ref = human.sequence_effect(d["worker"], d["hit"], d["position"], d["score"], d["gold"])[0]
    np.testing.assert_allclose(base.coef, ref["coef"], rtol=1e-9)
    np.testing.assert_allclose(base.se, ref["se"], rtol=1e-9)
    # worker correlation with gold: plain per-worker Pearson
    r = worker_gold_correlation(d["worker"], d["score"], d["gold"])
    names = np.unique(d["worker"])
    sel = d["worker"] == names[3]
    assert r[3] == pytest.approx(np.corrcoef(d["score"][sel], d["gold"][sel])[0, 1], rel=1e-12)
    # good/bad split by worker correlation (Thesis: good if r > 0.5)
    good = (r > 0.5)[np.unique(d["worker"], return_inverse=True)[1]]
    res_good = sequence_pooled(d["worker"], d["hit"], d["position"], d["score"], d["gold"], aspect=d["aspect"],
                               mask=good)
    assert res_good.n < res.n
    assert res_good["gold"][0] == pytest.approx(0.6, abs=0.1)


def _sim_binary(beta=(-0.4, 0.8, 1.5), n_hits=40, n_items=20, n_workers=10, seed=5):
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n_hits):
        expert = rng.random(n_items) < 0.5
        for w in range(n_workers):
            prev = 0.0
            for t in range(n_items):
                eta = beta[0] + beta[1] * prev + beta[2] * expert[t]
                y = float(rng.random() < 1 / (1 + math.exp(-eta)))
                rows.append((f"w{h}-{w}", h, t, y, float(expert[t])))
                prev = y
    wk, hit, pos, y, e = map(np.array, zip(*rows))
    return wk, hit, pos, y, e


def test_c5_logistic_recovers_parameters_and_matches_an_optimiser():
    from scipy.optimize import minimize

    wk, hit, pos, y, e = _sim_binary()
    res = sequence_logistic(wk, hit, pos, y, e, proportion=False)
    for name, true in zip(("const", "lag", "expert"), (-0.4, 0.8, 1.5)):
        coef, se, _ = res[name]
        assert abs(coef - true) < 3.5 * se, (name, coef, se)
    # with the proportion covariate: the IRLS optimum equals a generic optimiser's
    full = sequence_logistic(wk, hit, pos, y, e)
    cur, prev = lagged_pairs(wk, hit, pos)
    key = np.char.add(wk.astype(str), hit.astype(str))
    prop = np.array([(y[key == key[i]].sum() - y[i]) / ((key == key[i]).sum() - 1) for i in cur])
    X = np.column_stack([np.ones(cur.size), y[prev], e[cur], prop])
    yy = y[cur]

    def nll(b):
        eta = X @ b
        return float(np.sum(np.logaddexp(0, eta) - yy * eta))

    opt = minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-9})
    np.testing.assert_allclose(full.coef, opt.x, atol=2e-4)
    assert full.names == ["const", "lag", "expert", "prop"]
    assert full.n == cur.size


def test_c5_subsets_and_bad_input():
    wk = np.array(["a"] * 5 + ["b"] * 5)
    y = np.array([1, 1, 1, 1, 1, 1, 0, 1, 0, 0])
    e = np.array([1, 0, 0, 0, 1, 1, 0, 1, 0, 1])
    sub = binary_worker_subsets(wk, y, e)
    assert not sub["non_extreme"][0]
    assert sub["non_extreme"][5]
    assert not sub["good"][0]
    assert sub["good"][5]
    wk2, hit, pos, y2, e2 = _sim_binary(n_hits=4)
    with pytest.raises(AnalysisInputError, match="binary"):
        sequence_logistic(wk2, hit, pos, y2 * 2, e2)
    with pytest.raises(AnalysisInputError, match="separates"):
        sequence_logistic(wk2, hit, pos, e2, e2, proportion=False)
    with pytest.raises(AnalysisInputError, match="position"):
        sequence_logistic(wk2, hit, np.zeros_like(pos), y2, e2)


def _docqe_run_b(shared_data):
    """The raw Mechanical Turk batches of DocQE run B in presentation order: 'Answer.Q1' lists
    each HIT's 100 items as <prefix>_<segment>_<TYPE>_<position>__<score>."""
    import csv

    from conftest import require

    folder = require(shared_data / "docqe-eacl2017" / "batched-hits" / "runB")
    rows = []
    for f in sorted(folder.glob("*.csv")):
        with open(f, encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                for cell in r["Answer.Q1"].split("|"):
                    head, score = cell.rsplit("__", 1)
                    rows.append((r["WorkerId"], r["HITId"], r["Input.hit"], int(head.rsplit("_", 1)[1]), float(score)))
    return [np.array(c) for c in zip(*rows)]


def test_c4_c6_on_docqe_raw_batches(shared_data):
    """Real crowd sequences (DocQE run B: 144 assignments of 16 HITs, 8-11 workers per item).
    Gold = mean z of all the item's raters (the thesis uses the good workers' mean)."""
    worker, assignment, hit, pos, raw = _docqe_run_b(shared_data)
    # one worker took HIT 14 twice (two assignments): positions repeat -> a clear error
    with pytest.raises(AnalysisInputError, match="worker F0027 has two ratings at position 0 of HIT 14"):
        sequence_bins(worker, hit, pos, raw, raw)
    seq = np.char.add(np.char.add(worker.astype(str), "@"), assignment.astype(str))
    z, keep = human.standardize(seq, raw)
    assert keep.all()
    assert z.size == 14400
    _, slot = np.unique(np.char.add(np.char.add(hit.astype(str), "|"), pos.astype(str)), return_inverse=True)
    gold = (np.bincount(slot, z) / np.bincount(slot))[slot]
    res = sequence_bins(seq, hit, pos, z, gold, n_workers=(1, 5, 10))
    assert res["n_items"][:2].tolist() == [[528, 528, 528]] * 2  # 16 HITs x 99 lagged positions, tertiles
    assert res["n_items"][2].sum() == 396                        # slots with at least 10 raters
    # golden values of this release (regression anchors; Welch itself is checked against scipy above)
    np.testing.assert_allclose(res["high_minus_low"], [-0.00633, 0.09101, 0.05688], atol=5e-5)
    np.testing.assert_allclose(res["welch_p"][1], 0.001033, rtol=1e-3)
    fit = sequence_pooled(seq, hit, pos, z, gold)
    assert fit.n == 14400 - 144
    assert fit["lag"][0] == pytest.approx(0.10083, abs=5e-5)
    ref = human.sequence_effect(seq, hit, pos, z, gold)[0]
    plain = sequence_pooled(seq, hit, pos, z, gold, worker_covariate=False)
    np.testing.assert_allclose(plain.coef, ref["coef"], rtol=1e-9)


def test_non_numeric_positions_are_a_clear_error():
    with pytest.raises(AnalysisInputError, match="position must be numeric"):
        lagged_pairs(["w", "w"], ["h", "h"], ["first", "second"])
