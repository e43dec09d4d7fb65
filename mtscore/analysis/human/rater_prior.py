"""Fitting the Gamma prior of the Bayesian rater model on development HITs (Mathur 2021, §3.5).

The rater model (:mod:`.rater_model`, thesis §3.4) gives each worker j a precision
tau_j ~ Gamma(shape k, scale theta) and each z-score s_ij ~ N(mu_i, 1 / tau_j). The thesis
fixes k = 5, theta = 0.3 by fitting a Gamma distribution by maximum likelihood to the
precisions of the workers of 8 held-out development HITs: a worker's error is its score minus
the item's "ground truth" (the mean of the quality-control-passing workers), its precision is
1 / the variance of its errors (§3.5). :func:`fit_rater_prior` does this:

* ``method="thesis"``: that procedure - the point precision ``n_j / SS_j`` of every worker
  (SS_j the sum of its squared errors about the truth, n_j its judgements) and the maximum-
  likelihood Gamma fit (location 0) to those precisions. The precisions are themselves noisy
  (with n_j = 100 judgements their relative variance is about 2 / n_j), which widens their
  spread and biases k low (by about 10 % at k = 5, n_j = 100).
* ``method="marginal"`` (default): maximum likelihood under the model's own sampling
  distribution of the errors: given tau_j, ``SS_j ~ Gamma(n_j / 2, rate tau_j / 2)``;
  integrating tau_j over Gamma(k, theta) gives the closed-form density
  ``p(SS) = SS^(d-1) Gamma(d + k) / (2^d Gamma(d) Gamma(k) theta^k (SS / 2 + 1 / theta)^(d + k))``
  with d = n_j / 2, maximised over (k, theta). This removes the noise of the per-worker
  estimates, so k and theta are recovered without that bias.

The ground truth defaults to the leave-one-out mean of the *other* workers on the item (so a
worker's error does not contain its own score); pass ``truth`` to use another (e.g. the mean of
the QC-passing workers, as the thesis). The truth's own noise adds about E[1 / tau] / (W_i - 1)
to each error variance (W_i workers on item i); it narrows the spread of the precisions (k a
little high, theta a little low: about +3 % / -6 % with 60 workers per item at k = 5,
theta = 0.3, under 1 % with 250), so fit on development HITs with many workers per item.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError

__all__ = ["PriorFit", "fit_rater_prior", "worker_errors"]

METHODS = ("marginal", "thesis")


@dataclass(frozen=True, eq=False)  # holds arrays
class PriorFit:
    """A fitted Gamma prior of worker precision: ``shape`` k, ``scale`` theta (mean k theta),
    ``method``; per worker that entered the fit (codes ``workers`` (W,) int64): ``n`` (W,) int64
    judgements, ``sum_sq`` (W,) float64 the sum of squared errors, ``precision`` (W,) float64
    the point precision n / sum_sq. ``shape_se``/``scale_se``: asymptotic standard errors from
    the observed information (numerical Hessian of the method's negative log-likelihood)."""

    shape: float
    scale: float
    method: str
    shape_se: float
    scale_se: float
    workers: np.ndarray
    n: np.ndarray
    sum_sq: np.ndarray
    precision: np.ndarray

    @property
    def rate(self) -> float:
        return 1.0 / self.scale


def worker_errors(item, worker, score, truth=None) -> tuple[np.ndarray, np.ndarray]:
    """(error (N,) float64, used (N,) bool): each judgement's score minus its item's ground
    truth. ``item``, ``worker`` (N,) int codes, ``score`` (N,) float64 (z-scores); ``truth``
    (n_items,) float64 per item, or None: the mean of the other workers' scores on the item
    (leave-one-out; judgements of items no other worker scored are not ``used``, error NaN)."""
    it = np.asarray(item, dtype=np.int64)
    wk = np.asarray(worker, dtype=np.int64)
    s = np.asarray(score, dtype=np.float64)
    if not (it.shape == wk.shape == s.shape) or s.ndim != 1 or s.size == 0:
        raise AnalysisInputError(f"fit_rater_prior: item, worker and score must be non-empty 1-D arrays of one "
                                 f"length (got {it.shape}, {wk.shape}, {s.shape})")
    if not np.isfinite(s).all():
        raise AnalysisInputError("fit_rater_prior: scores contain NaN/inf")
    if it.min() < 0 or wk.min() < 0:
        raise AnalysisInputError("fit_rater_prior: item and worker codes must be 0 or more")
    if truth is not None:
        t = np.asarray(truth, dtype=np.float64)
        if t.ndim != 1 or t.size <= it.max():
            raise AnalysisInputError(f"fit_rater_prior: truth must be a 1-D array over items 0..{it.max()} "
                                     f"(got shape {t.shape})")
        e = s - t[it]
        return e, np.isfinite(e)
    total = np.bincount(it, weights=s)
    count = np.bincount(it)
    others = count[it] - 1
    used = others > 0
    e = np.full(s.shape, np.nan)
    e[used] = s[used] - (total[it][used] - s[used]) / others[used]
    return e, used


def _marginal_nll(log_params: np.ndarray, ss: np.ndarray, d: np.ndarray) -> float:
    from scipy.special import gammaln

    k, theta = np.exp(log_params)
    ll = ((d - 1) * np.log(ss) + gammaln(d + k) - d * np.log(2.0) - gammaln(d) - gammaln(k)
          - k * np.log(theta) - (d + k) * np.log(ss / 2.0 + 1.0 / theta))
    return float(-ll.sum())


def _thesis_nll(log_params: np.ndarray, prec: np.ndarray) -> float:
    from scipy.stats import gamma

    k, theta = np.exp(log_params)
    return float(-gamma.logpdf(prec, k, scale=theta).sum())


def _standard_errors(nll, x: np.ndarray, args: tuple) -> tuple[float, float]:
    """SEs of (k, theta) = exp(x) from the central-difference Hessian of ``nll`` in x (delta method)."""
    h = 1e-4
    H = np.empty((2, 2))
    for a in range(2):
        for b in range(2):
            ea, eb = np.eye(2)[a] * h, np.eye(2)[b] * h
            H[a, b] = (nll(x + ea + eb, *args) - nll(x + ea - eb, *args) - nll(x - ea + eb, *args)
                       + nll(x - ea - eb, *args)) / (4 * h * h)
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return float("nan"), float("nan")
    var = np.diag(cov) * np.exp(2 * x)
    se = [float(np.sqrt(v)) if v > 0 else float("nan") for v in var]
    return se[0], se[1]


def fit_rater_prior(item, worker, score, truth=None, method: str = "marginal",
                    min_judgements: int = 10) -> PriorFit:
    """Fit the rater model's Gamma(k, theta) prior of worker precision (Mathur 2021, §3.5) on
    development judgements (``item``, ``worker`` (N,) int codes, ``score`` (N,) float64
    z-scores; ``truth`` see :func:`worker_errors`). Workers with fewer than ``min_judgements``
    usable errors are left out. ``method``: "marginal" (maximum likelihood of the squared
    errors under the model) or "thesis" (maximum-likelihood Gamma fit to the point precisions);
    see the module docstring."""
    if method not in METHODS:
        raise AnalysisInputError(f"fit_rater_prior: method {method!r}: choose one of {', '.join(METHODS)}")
    if min_judgements < 2:
        raise AnalysisInputError(f"fit_rater_prior: min_judgements must be 2 or more, got {min_judgements}")
    e, used = worker_errors(item, worker, score, truth)
    wk = np.asarray(worker, dtype=np.int64)[used]
    e = e[used]
    n_all = np.bincount(wk)
    ss_all = np.bincount(wk, weights=e * e, minlength=n_all.size)
    keep = np.flatnonzero((n_all >= min_judgements) & (ss_all > 0))
    if keep.size < 2:
        raise AnalysisInputError(f"fit_rater_prior: {keep.size} worker(s) with {min_judgements}+ usable judgements; "
                                 "a Gamma fit needs 2 or more")
    n, ss = n_all[keep], ss_all[keep]
    prec = n / ss
    from scipy import optimize, stats

    k0, _, theta0 = stats.gamma.fit(prec, floc=0)
    if method == "thesis":
        x = np.log([k0, theta0])
        return PriorFit(float(k0), float(theta0), method, *_standard_errors(_thesis_nll, x, (prec,)),
                        keep, n, ss, prec)
    res = optimize.minimize(_marginal_nll, np.log([k0, theta0]), args=(ss, n / 2.0), method="Nelder-Mead",
                            options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 2000})
    if not res.success:
        raise AnalysisInputError(f"fit_rater_prior: the marginal likelihood did not converge ({res.message})")
    k, theta = np.exp(res.x)
    se = _standard_errors(_marginal_nll, res.x, (ss, n / 2.0))
    return PriorFit(float(k), float(theta), method, *se, keep, n, ss, prec)
