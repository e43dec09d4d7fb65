"""Sequence effects in crowd ratings (Mathur 2021, Chapter 4), beyond the eq. 4.1 regression
of :func:`sequence_effect`.

* :func:`sequence_bins` (Mathur 2021 §4.4.1, Table 4.3): the worst-case effect on scores: items binned by the gold score of
  the *previous* item in the HIT, the mean of N worker scores per item in each bin, High - Low
  with Welch's two-sample t-test.
* :func:`sequence_logistic` (Mathur 2021 §4.4.2): binary tasks, a logistic regression of the label on the
  previous label, the expert label and the worker's share of positive labels in the HIT
  (excluding the current item); :func:`binary_worker_subsets` gives the all / non-extreme /
  good worker subsets.
* :func:`sequence_pooled` (Mathur 2021 §4.4.2, AFFECTIVE): one OLS regression pooled over several aspects (the lag is the
  worker's previous rating of the same aspect in the HIT), controlling for the gold score and the
  worker's correlation with gold.

Inputs are parallel arrays with one entry per judgement: ``worker`` (N,), ``hit`` (N,),
``position`` (N,) presentation order within the HIT, scores (N,) float64. Regressions return a
:class:`Regression`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from .scores import category_codes

__all__ = [
    "Regression",
    "binary_worker_subsets",
    "lagged_pairs",
    "sequence_bins",
    "sequence_effect",
    "sequence_logistic",
    "sequence_pooled",
    "welch_test",
    "worker_gold_correlation",
]


@dataclass
class Regression:
    """A fitted regression: ``names`` (p,), ``coef``/``se``/``stat``/``p_value`` (p,) float64
    (``stat`` is t for OLS, z for logistic), ``n`` observations, ``converged``."""

    names: list[str]
    coef: np.ndarray
    se: np.ndarray
    stat: np.ndarray
    p_value: np.ndarray
    n: int
    converged: bool = True

    def __getitem__(self, name: str) -> tuple[float, float, float]:
        """(coef, se, p) of the named term, e.g. ``res['lag']``."""
        i = self.names.index(name)
        return float(self.coef[i]), float(self.se[i]), float(self.p_value[i])


def _codes(x) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype == object:
        x = x.astype(str)
    return np.unique(x, return_inverse=True)[1].ravel()


def _check(n: int, **arrays) -> None:
    for name, a in arrays.items():
        if a is not None and np.shape(a) != (n,):
            raise AnalysisInputError(f"{name} must be a 1-D array with one entry per judgement "
                                     f"({n}), got shape {np.shape(a)}")


def _finite(name: str, a) -> np.ndarray:
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise AnalysisInputError(f"{name} must be numeric (got values like {np.asarray(a).ravel()[:1]})") from None
    if not np.isfinite(a).all():
        raise AnalysisInputError(f"{name}[{int(np.flatnonzero(~np.isfinite(a))[0])}] is not finite; "
                                 "drop or impute missing ratings first")
    return a


def lagged_pairs(worker, hit, position, group=None) -> tuple[np.ndarray, np.ndarray]:
    """Indices (cur (M,), prev (M,)) of every judgement and the same worker's previous judgement
    in the same HIT (and same ``group``, e.g. aspect) in presentation order; the first item of
    each sequence has no lag and is left out. Duplicate positions raise."""
    n = np.shape(worker)[0]
    _check(n, worker=np.asarray(worker), hit=np.asarray(hit), position=np.asarray(position),
           group=None if group is None else np.asarray(group))
    w, h = _codes(worker), _codes(hit)
    g = np.zeros(n, np.int64) if group is None else _codes(group)
    pos = _finite("position", position)
    order = np.lexsort((pos, g, h, w))
    same = (w[order][1:] == w[order][:-1]) & (h[order][1:] == h[order][:-1]) & (g[order][1:] == g[order][:-1])
    dup = same & (pos[order][1:] == pos[order][:-1])
    if dup.any():
        i = int(order[1:][dup][0])
        raise AnalysisInputError(f"judgement {i}: worker {np.asarray(worker)[i]} has two ratings at position "
                                 f"{pos[i]:g} of HIT {np.asarray(hit)[i]}; positions must be unique per sequence")
    idx = np.flatnonzero(same) + 1
    return order[idx], order[idx - 1]


def _p_two_sided(stat: np.ndarray, dof: float | None) -> np.ndarray:
    from scipy.special import ndtr
    from scipy.stats import t as tdist

    if dof is None:
        return 2 * ndtr(-np.abs(stat))
    return 2 * tdist.sf(np.abs(stat), dof)


def _ols(X: np.ndarray, y: np.ndarray, names: list[str]) -> Regression:
    n, p = X.shape
    if n <= p:
        raise AnalysisInputError(f"regression: {n} lagged observations for {p} coefficients; need more ratings")
    xtx = X.T @ X
    if np.linalg.matrix_rank(xtx) < p:
        raise AnalysisInputError(f"regression: the predictors {', '.join(names)} are collinear (e.g. a constant "
                                 "lag or gold score); the coefficients are not identified")
    inv = np.linalg.inv(xtx)
    beta = inv @ (X.T @ y)
    resid = y - X @ beta
    dof = n - p
    se = np.sqrt(np.diag(inv) * (resid @ resid) / dof)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = beta / se
    return Regression(names, beta, se, t, _p_two_sided(t, dof), n)


def _logit(X: np.ndarray, y: np.ndarray, names: list[str], max_iter: int = 100, tol: float = 1e-10) -> Regression:
    """Logistic regression by Newton-Raphson (IRLS); Wald z tests from the inverse information.
    Perfect separation raises :class:`AnalysisInputError`."""
    n, p = X.shape
    if n <= p:
        raise AnalysisInputError(f"logistic regression: {n} lagged observations for {p} coefficients")
    if np.linalg.matrix_rank(X) < p:
        raise AnalysisInputError(f"logistic regression: the predictors {', '.join(names)} are collinear")
    beta = np.zeros(p)
    converged = False
    for _ in range(max_iter):
        mu = 0.5 * (1 + np.tanh(0.5 * (X @ beta)))  # stable logistic
        info = X.T @ (X * (mu * (1 - mu))[:, None])
        try:
            step = np.linalg.solve(info, X.T @ (y - mu))
        except np.linalg.LinAlgError:  # fitted probabilities all 0/1: separation
            break
        beta = beta + step
        if np.abs(step).max() < tol * (1 + np.abs(beta).max()):
            converged = True
            break
    if not converged or np.abs(beta).max() > 30:
        raise AnalysisInputError("logistic regression did not converge: a predictor separates the labels "
                                 "perfectly (e.g. a worker subset that always gives one label)")
    mu = 0.5 * (1 + np.tanh(0.5 * (X @ beta)))
    cov = np.linalg.inv(X.T @ (X * (mu * (1 - mu))[:, None]))
    se = np.sqrt(np.diag(cov))
    z = beta / se
    return Regression(names, beta, se, z, _p_two_sided(z, None), n, converged)


def welch_test(a, b) -> tuple[float, float, float]:
    """Welch's two-sample t-test of mean(a) - mean(b), two-sided: (t, dof, p). NaN when a
    sample has fewer than 2 values or both have zero variance."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.size < 2 or b.size < 2:
        return float("nan"), float("nan"), float("nan")
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if va + vb == 0:
        return float("nan"), float("nan"), float("nan")
    t = (a.mean() - b.mean()) / math.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    return float(t), float(dof), float(_p_two_sided(np.array([t]), dof)[0])


def sequence_bins(worker, hit, position, score, gold, n_workers: Sequence[int] = (1, 5, 10, 15),
                  bins: int = 3, residual: bool = False, seed: int = 0) -> dict[str, np.ndarray]:
    """Mathur 2021 §4.4.1, Table 4.3: worst-case effect of the previous item on scores.

    An item is a (HIT, position) slot rated by several workers in one order; ``gold`` (N,) is the
    gold score of the judged item (e.g. the mean z of good workers). Items are put into ``bins``
    equal-frequency bins by the gold of the previous item of the HIT (bin 0 = Low). For each N in
    ``n_workers`` every item with at least N ratings scores the mean of N of them drawn at random
    (``seed``); ``residual`` subtracts the item's gold first.

    Returns dict n (m,), mean_all (m,), bin_mean (m, bins), high_minus_low (m,), welch_t (m,),
    welch_p (m,) (two-sided, High vs Low), n_items (m, bins), edges (bins + 1,) of the
    previous-gold bins.
    """
    n = np.shape(score)[0]
    _check(n, worker=np.asarray(worker), hit=np.asarray(hit), position=np.asarray(position),
           gold=np.asarray(gold))
    s, g = _finite("score", score), _finite("gold", gold)
    if bins < 2:
        raise AnalysisInputError(f"bins must be at least 2 (got {bins})")
    if any(int(k) < 1 for k in n_workers):
        raise AnalysisInputError("every N in n_workers must be at least 1")
    lagged_pairs(worker, hit, position)  # validates: one rating per worker and position of a HIT
    h, pos = _codes(hit), _finite("position", position)
    slot_keys, slot = np.unique(np.column_stack([h, pos]), axis=0, return_inverse=True)
    slot = slot.ravel()
    n_slots = slot_keys.shape[0]
    cnt = np.bincount(slot, minlength=n_slots)
    slot_gold = np.bincount(slot, g, minlength=n_slots) / cnt
    # previous slot of the same HIT (slot_keys is sorted by HIT, then position)
    has_prev = np.r_[False, slot_keys[1:, 0] == slot_keys[:-1, 0]]
    prev_gold = np.full(n_slots, np.nan)
    prev_gold[has_prev] = slot_gold[np.flatnonzero(has_prev) - 1]
    ok = has_prev
    if ok.sum() < bins:
        raise AnalysisInputError(f"sequence_bins: only {int(ok.sum())} items have a previous item; need at least {bins}")
    edges = np.quantile(prev_gold[ok], np.linspace(0, 1, bins + 1))
    bin_of = np.clip(np.searchsorted(edges, prev_gold, side="right") - 1, 0, bins - 1)
    y = s - g if residual else s
    rng = np.random.default_rng(seed)
    m = len(n_workers)
    out = {"n": np.asarray(n_workers, np.int64), "mean_all": np.full(m, np.nan), "bin_mean": np.full((m, bins), np.nan),
           "high_minus_low": np.full(m, np.nan), "welch_t": np.full(m, np.nan), "welch_p": np.full(m, np.nan),
           "n_items": np.zeros((m, bins), np.int64), "edges": edges}
    for r, k in enumerate(n_workers):
        vals = _slot_means(y, slot, cnt, ok & (cnt >= k), int(k), rng)
        use = np.isfinite(vals)
        out["mean_all"][r] = vals[use].mean() if use.any() else np.nan
        per_bin = [vals[use & (bin_of == b)] for b in range(bins)]
        out["n_items"][r] = [v.size for v in per_bin]
        out["bin_mean"][r] = [v.mean() if v.size else np.nan for v in per_bin]
        out["high_minus_low"][r] = out["bin_mean"][r, -1] - out["bin_mean"][r, 0]
        out["welch_t"][r], _, out["welch_p"][r] = welch_test(per_bin[-1], per_bin[0])
    return out


def _slot_means(y: np.ndarray, slot: np.ndarray, cnt: np.ndarray, use: np.ndarray, k: int,
                rng: np.random.Generator) -> np.ndarray:
    """Per slot the mean of ``k`` of its ratings drawn without replacement (NaN where not ``use``)."""
    order = np.argsort(slot, kind="mergesort")
    starts = np.r_[0, np.cumsum(cnt)[:-1]]
    vals = np.full(cnt.size, np.nan)
    for i in np.flatnonzero(use):
        members = order[starts[i]:starts[i] + cnt[i]]
        vals[i] = y[rng.choice(members, k, replace=False)].mean()
    return vals


def binary_worker_subsets(worker, label, expert, extreme: tuple[float, float] = (0.2, 0.8),
                          min_accuracy: float = 0.6) -> dict[str, np.ndarray]:
    """Worker subsets of Mathur 2021 §4.4.2 as judgement masks (N,) bool: ``all``; ``non_extreme`` (the worker's
    share of positive labels within ``extreme``, inclusive); ``good`` (accuracy against the
    expert label at least ``min_accuracy``)."""
    n = np.shape(label)[0]
    _check(n, worker=np.asarray(worker), expert=np.asarray(expert))
    y, e = _binary("label", label), _binary("expert", expert)
    w = _codes(worker)
    cnt = np.bincount(w).astype(np.float64)
    rate = np.bincount(w, y) / cnt
    acc = np.bincount(w, (y == e).astype(np.float64)) / cnt
    return {"all": np.ones(n, bool), "non_extreme": ((rate >= extreme[0]) & (rate <= extreme[1]))[w],
            "good": (acc >= min_accuracy)[w]}


def _binary(name: str, a) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == bool:
        return a.astype(np.float64)
    v = _finite(name, a)
    if not np.isin(v, (0.0, 1.0)).all():
        raise AnalysisInputError(f"{name} must be binary (0/1 or False/True); found {v[~np.isin(v, (0.0, 1.0))][0]:g}")
    return v


def sequence_logistic(worker, hit, position, label, expert=None, proportion: bool = True,
                      mask=None) -> Regression:
    """Mathur 2021 §4.4.2: logistic regression of the binary ``label`` (N,) on the same worker's
    previous label in the HIT (``lag``), the ``expert`` (N,) label and, with ``proportion``, the
    worker's share of positive labels in the current HIT excluding the current item (``prop``).
    ``mask`` (N,) bool restricts the *modelled* judgements (e.g. a worker subset) after the lags
    are formed. A HIT of one item gives no lagged rows; perfect separation raises."""
    n = np.shape(label)[0]
    _check(n, expert=None if expert is None else np.asarray(expert), mask=None if mask is None else np.asarray(mask))
    y = _binary("label", label)
    cur, prev = lagged_pairs(worker, hit, position)
    cols, names = [np.ones(cur.size), y[prev]], ["const", "lag"]
    if expert is not None:
        cols.append(_binary("expert", expert)[cur])
        names.append("expert")
    if proportion:
        w, h = _codes(worker), _codes(hit)
        key = w * (h.max() + 1) + h
        _, kc = np.unique(key, return_inverse=True)
        tot = np.bincount(kc, y)
        num = np.bincount(kc)
        with np.errstate(invalid="ignore", divide="ignore"):
            prop = (tot[kc] - y) / (num[kc] - 1)
        cols.append(prop[cur])
        names.append("prop")
    keep = np.ones(cur.size, bool) if mask is None else np.asarray(mask, bool)[cur]
    X = np.column_stack(cols)[keep]
    return _logit(X, y[cur][keep], names)


def sequence_pooled(worker, hit, position, score, gold, aspect=None, worker_covariate: bool = True,
                    mask=None) -> Regression:
    """Mathur 2021 §4.4.2 (AFFECTIVE): one OLS regression pooled over aspects,
    y = b0 + b1 lag + b2 gold [+ b3 worker_corr] + e, where the lag is the worker's previous
    rating of the same ``aspect`` (N,) in the HIT (all one aspect when None) and worker_corr is
    the Pearson correlation of each worker's ratings with ``gold`` (N,) over all their
    judgements (the worker-quality control; :func:`worker_gold_correlation` gives it for
    good/bad splits). ``mask`` restricts the modelled judgements after lagging."""
    n = np.shape(score)[0]
    _check(n, gold=np.asarray(gold), mask=None if mask is None else np.asarray(mask))
    s, g = _finite("score", score), _finite("gold", gold)
    cur, prev = lagged_pairs(worker, hit, position, aspect)
    cols, names = [np.ones(cur.size), s[prev], g[cur]], ["const", "lag", "gold"]
    if worker_covariate:
        cols.append(worker_gold_correlation(worker, s, g)[_codes(worker)][cur])
        names.append("worker_corr")
    keep = np.ones(cur.size, bool) if mask is None else np.asarray(mask, bool)[cur]
    X = np.column_stack(cols)[keep]
    if not np.isfinite(X).all():
        raise AnalysisInputError("sequence_pooled: a worker's ratings (or the gold scores of their items) are "
                                 "constant, so their correlation with gold is undefined; drop that worker")
    return _ols(X, s[cur][keep], names)


def worker_gold_correlation(worker, score, gold) -> np.ndarray:
    """Pearson r of each worker's scores with the gold scores of the same judgements, in the
    order of ``np.unique(worker)``; NaN for a worker with fewer than 2 ratings or constant ones."""
    w = _codes(worker)
    s, g = _finite("score", score), _finite("gold", gold)
    k = int(w.max()) + 1 if w.size else 0
    cnt = np.bincount(w, minlength=k).astype(np.float64)
    ms, mg = np.bincount(w, s, k) / np.maximum(cnt, 1), np.bincount(w, g, k) / np.maximum(cnt, 1)
    ds, dg = s - ms[w], g - mg[w]
    sxy, sxx, syy = np.bincount(w, ds * dg, k), np.bincount(w, ds * ds, k), np.bincount(w, dg * dg, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    r[(cnt < 2) | (sxx == 0) | (syy == 0)] = np.nan
    return r


def sequence_effect(worker, hit, position, score, gold=None, buckets: int = 1):
    """Sequence-effect regression (Mathur 2021 eq. 4.1): Y_t = b0 + b1 Y_{t-1} + b2 Gold_t + e,
    pooled OLS over all workers, the lag taken within the same worker and HIT in presentation
    order (the first item of each HIT has no lag). Without ``gold`` fits b1' (no control).
    ``buckets`` > 1 fits the model separately in equal-size position buckets (tertiles = 3).

    Returns a list (one per bucket) of dicts: coef (p,), se (p,), t (p,), p_value (p,), n,
    names ['const', 'lag', 'gold'].
    """
    from scipy.stats import t as tdist

    w = category_codes(worker)[1]
    h = category_codes(hit)[1]
    pos = np.asarray(position, dtype=np.float64)
    y = np.asarray(score, dtype=np.float64)
    g = None if gold is None else np.asarray(gold, dtype=np.float64)
    order = np.lexsort((pos, h, w))
    same = np.r_[False, (w[order][1:] == w[order][:-1]) & (h[order][1:] == h[order][:-1])]
    cur = order[same]
    prev = order[np.flatnonzero(same) - 1]
    edges = np.quantile(pos, np.linspace(0, 1, buckets + 1)) if buckets > 1 else None
    out = []
    for b in range(buckets):
        sel = np.ones(cur.size, bool)
        if edges is not None:
            pc = pos[cur]
            sel = (pc >= edges[b]) & ((pc < edges[b + 1]) if b < buckets - 1 else (pc <= edges[b + 1]))
        cols = [np.ones(sel.sum()), y[prev][sel]]
        names = ["const", "lag"]
        if g is not None:
            cols.append(g[cur][sel])
            names.append("gold")
        X = np.column_stack(cols)
        yy = y[cur][sel]
        beta, *_ = np.linalg.lstsq(X, yy, rcond=None)
        resid = yy - X @ beta
        dof = X.shape[0] - X.shape[1]
        sigma2 = resid @ resid / dof
        se = np.sqrt(np.diag(sigma2 * np.linalg.inv(X.T @ X)))
        t = beta / se
        out.append({"names": names, "coef": beta, "se": se, "t": t,
                    "p_value": 2 * tdist.sf(np.abs(t), dof), "n": int(X.shape[0])})
    return out

