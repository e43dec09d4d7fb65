"""Fitting the rater model's Gamma prior on development HITs (Mathur 2021, §3.5): recovery of a
known shape k and scale theta from simulated HITs.

Tolerances: 3 asymptotic standard errors (the fit's observed information). With 8 HITs of 100
items and 250 workers per HIT (2,000 workers, 100 judgements each) the SE of k is about 0.17 and
of theta about 0.010 at k = 5, theta = 0.3 (a 40-seed simulation gave sampling SDs 0.36 / 0.026
at 480 workers, in line with the SEs there, 0.34 / 0.022). The leave-one-out ground truth adds
about E[1/tau] / 249 = 0.3 % to each error variance, a bias well under one SE."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mtscore.analysis.errors import AnalysisInputError
from mtscore.analysis.human.rater_model import simulate
from mtscore.analysis.human.rater_prior import fit_rater_prior, worker_errors


def development_hits(k: float, theta: float, workers_per_hit: int, seed: int, hits: int = 8):
    """``hits`` HITs of 100 items, each scored by its own ``workers_per_hit`` workers whose
    precisions are drawn from Gamma(k, theta). Returns item, worker, score (N,), mu, tau."""
    parts = [simulate(n_items=100, n_workers=workers_per_hit, prior_shape=k, prior_scale=theta,
                      seed=seed * 1000 + h) for h in range(hits)]
    item = np.concatenate([d["item"] + 100 * h for h, d in enumerate(parts)])
    worker = np.concatenate([d["worker"] + workers_per_hit * h for h, d in enumerate(parts)])
    return (item, worker, np.concatenate([d["score"] for d in parts]),
            np.concatenate([d["mu"] for d in parts]), np.concatenate([d["tau"] for d in parts]))


@pytest.mark.parametrize(("k", "theta"), [(5.0, 0.3), (2.0, 1.0)])
def test_marginal_fit_recovers_prior(k, theta):
    item, worker, score, _, _ = development_hits(k, theta, 250, seed=2021)
    f = fit_rater_prior(item, worker, score)
    assert f.method == "marginal"
    assert len(f.workers) == 2000
    assert np.all(f.n == 100)
    assert 0 < f.shape_se < 0.1 * k  # 2,000 workers: the SE is a few per cent of k
    assert 0 < f.scale_se < 0.1 * theta
    assert abs(f.shape - k) < 3 * f.shape_se, (f.shape, f.shape_se)
    assert abs(f.scale - theta) < 3 * f.scale_se, (f.scale, f.scale_se)
    assert f.rate == pytest.approx(1 / f.scale)


def test_known_truth_and_thesis_method():
    """With the true item qualities as ground truth the marginal likelihood is exact; the thesis'
    Gamma fit to point precisions is scipy's ML fit (location 0) to n_j / SS_j, and the noise of
    those precisions (relative variance ~2/100) spreads them, so its k comes out lower."""
    item, worker, score, mu, tau = development_hits(5.0, 0.3, 60, seed=7)
    f = fit_rater_prior(item, worker, score, truth=mu)
    assert abs(f.shape - 5.0) < 3 * f.shape_se
    assert abs(f.scale - 0.3) < 3 * f.scale_se
    e = score - mu[item]
    prec = np.array([100 / np.sum(e[worker == j] ** 2) for j in range(480)])
    np.testing.assert_allclose(f.precision, prec, rtol=1e-12)
    t = fit_rater_prior(item, worker, score, truth=mu, method="thesis")
    k0, loc, th0 = stats.gamma.fit(prec, floc=0)
    assert (t.shape, t.scale) == pytest.approx((k0, th0), rel=1e-9)
    assert loc == 0
    assert t.shape < f.shape
    # the point precisions track the true ones
    assert np.corrcoef(prec, tau)[0, 1] > 0.9


def test_worker_errors_leave_one_out_and_errors():
    item = np.array([0, 0, 0, 1, 1, 2])
    worker = np.array([0, 1, 2, 0, 1, 0])
    score = np.array([1.0, 2.0, 6.0, -1.0, 1.0, 5.0])
    e, used = worker_errors(item, worker, score)
    assert used.tolist() == [True] * 5 + [False]
    np.testing.assert_allclose(e[:5], [1 - 4, 2 - 3.5, 6 - 1.5, -2, 2])
    assert np.isnan(e[5])
    e2, used2 = worker_errors(item, worker, score, truth=np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(e2, [1, 2, 6, -2, 0, 3])
    assert used2.all()
    with pytest.raises(AnalysisInputError, match="method"):
        fit_rater_prior(item, worker, score, method="em")
    with pytest.raises(AnalysisInputError, match="a Gamma fit needs 2"):
        fit_rater_prior(item, worker, score)
    with pytest.raises(AnalysisInputError, match="truth must be"):
        worker_errors(item, worker, score, truth=np.zeros(2))
    with pytest.raises(AnalysisInputError, match="NaN"):
        worker_errors(item, worker, np.array([1, 2, np.nan, 1, 1, 1]))
    with pytest.raises(AnalysisInputError, match="one length"):
        worker_errors(item, worker[:3], score)
