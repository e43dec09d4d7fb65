"""The rater model's evaluation protocol (Mathur 2021, thesis §3.5) on simulated HITs with a
known truth: baselines, the 1-20-worker cohort sweep, the adversarial sweep, spammer removal
with its k sweep and the residual diagnostics. The thesis' WMT13/WMT16 HITs are not released
with the data, so the assertions are what the simulation shows: each test runs one seed, and
its margins are about half the smallest gap seen over seeds 0-9 when the test was written."""
import numpy as np
import pytest
from scipy.special import ndtri

from mtscore.analysis.correlation import pearson, spearman
from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.human.rater_eval import (
    adversarial_sweep,
    baseline_estimates,
    cohort_sweep,
    normal_qq,
    spammer_sweep,
    worker_r,
    worker_residuals,
)
from mtscore.analysis.human.rater_model import simulate
from mtscore.analysis.human.scores import standardize


def crowd(n_items=60, n_good=20, n_random=0, seed=0):
    """One HIT: every worker scores every item on 0-100. A good worker: 50 + bias + 15 * scale *
    (mu + N(0, 1 / tau)), tau ~ Gamma(5, scale 1), rounded and clipped; a random worker: uniform
    integers 0-100. Returns item, worker, score (N,), mu (n_items,), random (W,) bool."""
    rng = np.random.default_rng(seed)
    mu = rng.standard_normal(n_items)
    W = n_good + n_random
    tau = rng.gamma(5.0, 1.0, W)
    bias, scale = rng.normal(0, 10, W), rng.uniform(0.6, 1.4, W)
    scores = []
    for j in range(W):
        if j < n_good:
            raw = 50 + bias[j] + 15 * scale[j] * (mu + rng.standard_normal(n_items) / np.sqrt(tau[j]))
            scores.append(np.clip(np.round(raw), 0, 100))
        else:
            scores.append(rng.integers(0, 101, n_items).astype(float))
    item = np.tile(np.arange(n_items), W)
    worker = np.repeat(np.arange(W), n_items)
    return item, worker, np.concatenate(scores), mu, np.arange(W) >= n_good


def test_baseline_estimates_by_hand():
    # worker 0: 10, 20, 30 (z -1, 0, 1); worker 1: 50, 70 (z -0.707, 0.707); worker 2 fails QC
    item = np.array([0, 1, 2, 0, 2, 1, 2])
    worker = np.array([0, 0, 0, 1, 1, 2, 2])
    score = np.array([10.0, 20, 30, 50, 70, 0, 100])
    est = baseline_estimates(item, worker, score, qc_pass=[True, True, False], n_items=4)
    h = np.sqrt(0.5)
    assert est["raw-mean"][:3].tolist() == [30.0, 10.0, 200 / 3]
    np.testing.assert_allclose(est["z-mean"][:3], [(-1 - h) / 2, (0 - h) / 2, (1 + h + h) / 3], rtol=1e-12)
    np.testing.assert_allclose(est["DA"][:3], [(-1 - h) / 2, 0.0, (1 + h) / 2], rtol=1e-12, atol=1e-15)
    assert np.isnan([est[m][3] for m in est]).all()  # item 3: no judgement
    assert "DA" not in baseline_estimates(item, worker, score)
    with pytest.raises(AnalysisInputError, match="qc_pass must be"):
        baseline_estimates(item, worker, score, qc_pass=[True])
    with pytest.raises(AnalysisInputError, match="one length"):
        baseline_estimates(item, worker[:2], score)


def test_cohort_sweep_good_workers_r_rises_with_n():
    item, worker, score, mu, _ = crowd(n_good=20, seed=1)
    sw = cohort_sweep(item, worker, score, mu, sizes=[1, 2, 5, 10, 20], repeats=3, seed=1)
    assert sw.methods == ("raw-mean", "z-mean", "model")
    assert sw.r.shape == (3, 5, 3)
    m = sw.mean()
    assert (np.diff(m, axis=1) > 0).all()  # every method gains with every step of n
    # all 20 workers: one cohort whatever the order, so no spread over repeats
    assert sw.sd()[:, -1] == pytest.approx([0, 0, 0], abs=1e-12)
    assert m[1, -1] > 0.98
    assert m[2, -1] > 0.98
    # z-scores remove the workers' biases: z-mean beats raw-mean with few workers
    assert sw.of("z-mean")[0] > sw.of("raw-mean")[0] + 0.025  # seeds 0-9: at least +0.049
    rows = sw.rows()
    assert rows[0] == ("raw-mean", 1, m[0, 0], sw.sd()[0, 0])
    assert len(rows) == 15


def test_cohort_sweep_mixed_cohort_model_beats_z_mean():
    """Half the workers random: the model is ahead of z-mean from 5 workers per item on
    (seeds 0-9: at least 0.05 at n = 5 and n = 10; at n = 1 the two are the same estimate up to
    the prior's shrinkage). DA (QC-passing workers only) is best, as it knows who is random."""
    item, worker, score, mu, rand = crowd(n_good=12, n_random=12, seed=0)
    sw = cohort_sweep(item, worker, score, mu, sizes=[1, 5, 10], repeats=3, seed=0,
                      methods=("raw-mean", "z-mean", "DA", "model"), qc_pass=~rand)
    z, model = sw.of("z-mean"), sw.of("model")
    assert abs(model[0] - z[0]) < 0.02
    assert (model[1:] > z[1:] + 0.03).all()
    assert (sw.of("DA") > model - 0.02).all()
    assert (z > sw.of("raw-mean")).all()
    # per-HIT cohorts (group): the same n workers for every item
    swg = cohort_sweep(item, worker, score, mu, sizes=[5, 10], repeats=2, group=np.zeros_like(item))
    assert swg.x_name == "workers per group"
    assert (swg.of("model") > swg.of("z-mean") + 0.015).all()  # seeds 0-9: at least +0.032
    with pytest.raises(AnalysisInputError, match="DA needs qc_pass"):
        cohort_sweep(item, worker, score, mu, methods=("DA",))
    with pytest.raises(AnalysisInputError, match="unknown method"):
        cohort_sweep(item, worker, score, mu, methods=("median",))
    with pytest.raises(AnalysisInputError, match="at least 3 finite"):
        cohort_sweep(item, worker, score, np.full(60, np.nan))


def test_adversarial_sweep():
    """Thesis §3.5.3 (5 good workers + N random ones; printed: 0.94 both at N = 0, model 0.16
    ahead at N = 20). Seeds 0-9: equal within 0.006 at N = 0; model ahead by at least 0.10 at N = 20."""
    item, worker, score, mu, _ = crowd(n_good=5, seed=2)
    z = standardize(worker, score)[0]
    sw = adversarial_sweep(item, worker, z, mu, n_random=[0, 10, 20], repeats=3, seed=2)
    assert sw.methods == ("z-mean", "model")
    assert sw.x.tolist() == [0, 10, 20]
    z_r, model_r = sw.of("z-mean"), sw.of("model")
    assert abs(model_r[0] - z_r[0]) < 0.01
    assert model_r[2] > z_r[2] + 0.05
    assert z_r[0] > z_r[1] > z_r[2]
    assert sw.sd()[:, 0] == pytest.approx([0, 0], abs=1e-12)  # N = 0: no random draw


def test_spammer_sweep_rankings_and_k():
    """Thesis §3.5.4: 8 good + 6 random workers. Every ranking puts the random workers last;
    keeping the top 8 beats keeping all 14 for the correlation-ranked baselines (seeds 0-9:
    at least +0.035 z-mean, +0.09 raw-mean); the model is already robust to them (flat, as the thesis'
    mixed cohort: within 0.005)."""
    item, worker, score, mu, rand = crowd(n_good=8, n_random=6, seed=0)
    res = spammer_sweep(item, worker, score, mu)
    sw = res.sweep
    assert sw.x.tolist() == list(range(14, 1, -1))
    assert sw.methods == ("model", "raw-mean", "z-mean")
    for m in sw.methods:
        assert set(res.order(m)[-6:].tolist()) == set(np.flatnonzero(rand).tolist()), m
    r = sw.mean()
    at8 = sw.x.tolist().index(8)
    assert r[1, at8] > r[1, 0] + 0.05
    assert r[2, at8] > r[2, 0] + 0.015
    assert r[0, at8] > r[0, 0] - 0.005
    # per group: two HITs of 14 workers each, ranked separately
    it2, wk2, s2, mu2, _ = crowd(n_items=40, n_good=8, n_random=6, seed=3)
    item_g = np.r_[item, it2 + 60]
    worker_g = np.r_[worker, wk2 + 14]
    res_g = spammer_sweep(item_g, worker_g, np.r_[score, s2], np.r_[mu, mu2], ks=[14, 8],
                          group=(item_g >= 60).astype(int))
    rg = res_g.sweep.mean()
    assert (rg[1:, 1] > rg[1:, 0] + 0.015).all()


def test_worker_r_reliability_with_the_truth():
    """Fig. 3.1: each worker's r with the truth; good workers well above the random ones, and
    the value is numpy's corrcoef over the worker's evaluated items."""
    item, worker, score, mu, rand = crowd(n_good=6, n_random=3, seed=7)
    truth = mu.copy()
    truth[:10] = np.nan  # 10 QC items, not evaluated
    r = worker_r(item, worker, score, truth, n_workers=11)
    assert r.shape == (11,)
    assert np.isnan(r[9:]).all()  # codes 9, 10: no judgements
    sel = (worker == 2) & (item >= 10)
    assert r[2] == pytest.approx(np.corrcoef(score[sel], mu[item[sel]])[0, 1], rel=1e-12)
    assert r[:9][~rand].min() > 0.6  # seeds 0-9: at least 0.73
    assert np.abs(r[:9][rand]).max() < 0.4  # seeds 0-9: at most 0.28
    assert np.isnan(worker_r([0, 1, 2], [0, 0, 0], [5.0, 5.0, 5.0], [0.1, 0.2, 0.3]))[0]  # constant
    assert np.isnan(worker_r([0, 1], [0, 0], [1.0, 2.0], [0.1, 0.2]))[0]  # under 3 items


def test_worker_residuals_and_qq():
    """§3.5.2 diagnostics: against the truth the errors have mean about 0 and a variance that
    follows the worker's precision."""
    d = simulate(n_items=300, n_workers=8, seed=4, prior_scale=0.3)
    res = worker_residuals(d["item"], d["worker"], d["score"], d["mu"])
    assert res.worker.tolist() == list(range(8))
    assert res.n.tolist() == [300] * 8
    assert np.all(np.abs(res.mean) < 4 * res.sd / np.sqrt(res.n))
    np.testing.assert_allclose(res.precision, d["tau"], rtol=0.35)  # 300 errors: SE about 8 %; seeds 0-9: within 26 %
    assert spearman(res.precision, d["tau"]) > 0.6  # seeds 0-9: at least 0.74
    w0 = res.of(0, d["worker"])
    assert w0.std(ddof=1) == pytest.approx(res.sd[0], rel=1e-12)
    q, v = normal_qq(np.array([3.0, -1.0, np.nan, 0.5, 2.0]))
    np.testing.assert_allclose(q, ndtri([0.125, 0.375, 0.625, 0.875]), rtol=1e-12)
    assert v.tolist() == [-1.0, 0.5, 2.0, 3.0]
    q, v = normal_qq(w0)
    assert pearson(q, v) > 0.98  # normal errors: a straight QQ line


def test_sweep_and_residual_plots_draw_the_numbers(monkeypatch, tmp_path):
    """The figures plot the sweep's mean r per method and each worker's QQ points (the lines
    drawn are captured from matplotlib, not read from pixels)."""
    pytest.importorskip("matplotlib")
    from matplotlib.axes import Axes

    from mtscore.analysis import plots

    drawn = []
    real_plot = Axes.plot

    def record(self, *args, **kw):
        drawn.append((np.asarray(args[0], dtype=float), np.asarray(args[1], dtype=float), kw.get("label")))
        return real_plot(self, *args, **kw)

    monkeypatch.setattr(Axes, "plot", record)
    item, worker, score, mu, _ = crowd(n_items=30, n_good=6, seed=5)
    sw = cohort_sweep(item, worker, score, mu, sizes=[1, 3, 6], repeats=2, seed=5)
    out = tmp_path / "sweep.png"
    png = plots.sweep_plot(sw, path=str(out))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.read_bytes() == png
    assert [d[2] for d in drawn] == list(sw.methods)
    for i, (x, y, _) in enumerate(drawn):
        assert x.tolist() == [1.0, 3.0, 6.0]
        np.testing.assert_array_equal(y, sw.mean()[i])
    drawn.clear()
    d = simulate(n_items=50, n_workers=3, seed=6)
    res = worker_residuals(d["item"], d["worker"], d["score"], d["mu"])
    assert plots.residual_plot(res, d["worker"], [0, 2])[:4] == b"\x89PNG"
    (q0, v0, _), (l0x, l0y, _), (q2, v2, _), _ = drawn
    assert v0.tolist() == sorted(res.of(0, d["worker"]).tolist())
    np.testing.assert_allclose(q0, ndtri((np.arange(50) + 0.5) / 50), rtol=1e-12)
    np.testing.assert_allclose(l0y, res.mean[0] + res.sd[0] * l0x, rtol=1e-12)
    assert v2.tolist() == sorted(res.of(2, d["worker"]).tolist())
    np.testing.assert_array_equal(q2, q0)  # 50 errors each: the same normal quantiles
