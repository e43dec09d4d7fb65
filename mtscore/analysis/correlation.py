"""Correlation coefficients between human scores and many metrics at once.

Conventions: ``human`` is a float64 vector of shape (n,), ``metrics`` a float64 matrix of shape
(m, n) (one row per metric; a 1-D input is treated as one metric and the result is a scalar).
NaN in a metric row drops that position for that row only ("pairwise complete"); NaN in
``human`` drops the position everywhere. Constant vectors give NaN.

Kendall variants follow scipy (``b``, ``c``) and Deutsch et al. 2023 / mt-metrics-eval
(``'23'``, ``'acc23'``, with an optional ``epsilon``: metric differences <= epsilon are ties).
``kendall_like`` is the WMT17-20 DARR statistic (|gold diff| >= thresh, metric ties discordant).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .kendall_tau import kendall_rows

__all__ = [
    "CORRELATIONS",
    "bootstrap_ci",
    "correlate",
    "kendall",
    "kendall_like",
    "kendall_like_pairs",
    "pearson",
    "pow2_normalise",
    "rankdata_rows",
    "rolling_window",
    "spearman",
    "top_n",
]


def _prep(human, metrics) -> tuple[np.ndarray, np.ndarray, bool]:
    h = np.asarray(human, dtype=np.float64)
    M = np.asarray(metrics, dtype=np.float64)
    scalar = M.ndim == 1
    if scalar:
        M = M[None, :]
    if h.ndim != 1 or M.shape[-1] != h.shape[0]:
        raise ValueError(f"human has shape {h.shape}, metrics {M.shape}: need (n,) and (m, n)")
    keep = ~np.isnan(h)
    if not keep.all():
        h, M = h[keep], M[:, keep]
    return h, M, scalar


def _out(r: np.ndarray, scalar: bool):
    return float(r[0]) if scalar else r


def pow2_normalise(X: np.ndarray) -> np.ndarray:
    """``X`` with every vector along the last axis multiplied by a power of two that brings its
    largest magnitude into [0.5, 1) (all-zero and non-finite vectors are left as they are).

    This is how Pearson r is made scale-safe: r does not change when a variable is multiplied
    by a positive constant, but the sums of squares do, and with scores near 1e300 they overflow
    (r became 0 for every metric) or near 1e-300 underflow (r became NaN). After normalising,
    every centred value is at most 2 in magnitude, so nothing overflows. A power of two (not the
    standard deviation) is used because multiplying by it is exact in binary floating point:
    every sum, mean and product below is the old one times a power of two, so r on ordinary
    data is bit-for-bit what it was (the oracle tests compare to 1e-12)."""
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return X
    with np.errstate(invalid="ignore"):
        _, e = np.frexp(np.max(np.abs(X), axis=-1, keepdims=True))  # frexp(0 / inf / nan) -> e = 0
    return np.ldexp(X, -e)


def _pearson_rows(h: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Pearson of h (n,) with each row of M (m, n), no NaN (scale-safe: :func:`pow2_normalise`)."""
    h, M = pow2_normalise(h), pow2_normalise(M)
    hc = h - h.mean()
    Mc = M - M.mean(axis=1, keepdims=True)
    num = Mc @ hc
    den = np.sqrt((Mc * Mc).sum(axis=1) * (hc @ hc))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    r[den == 0] = np.nan
    return np.clip(r, -1.0, 1.0)


def _rowwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], h: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Apply a vectorised row statistic, falling back to per-row masking where a row has NaN."""
    bad = np.isnan(M).any(axis=1)
    out = np.full(M.shape[0], np.nan)
    if (~bad).any():
        out[~bad] = fn(h, M[~bad])
    for i in np.flatnonzero(bad):
        ok = ~np.isnan(M[i])
        if ok.sum() >= 2:
            out[i] = fn(h[ok], M[i, ok][None, :])[0]
    return out


def pearson(human, metrics):
    """Pearson r of ``human`` (n,) with each row of ``metrics`` (m, n) -> (m,) float64."""
    h, M, scalar = _prep(human, metrics)
    return _out(_rowwise(_pearson_rows, h, M), scalar)


def rankdata_rows(M: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties averaged) along the last axis, vectorised over rows."""
    M = np.asarray(M, dtype=np.float64)
    order = np.argsort(M, axis=-1, kind="mergesort")
    sorted_ = np.take_along_axis(M, order, axis=-1)
    n = M.shape[-1]
    ranks = np.empty_like(M)
    flat_sorted = sorted_.reshape(-1, n)
    flat_order = order.reshape(-1, n)
    flat_ranks = ranks.reshape(-1, n)
    for r in range(flat_sorted.shape[0]):
        s = flat_sorted[r]
        new = np.r_[True, s[1:] != s[:-1]]
        grp = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        ends = np.r_[starts[1:], n]
        avg = (starts + ends - 1) / 2.0 + 1.0
        flat_ranks[r, flat_order[r]] = avg[grp]
    return ranks


def _spearman_rows(h, M):
    return _pearson_rows(rankdata_rows(h[None, :])[0], rankdata_rows(M))


def spearman(human, metrics):
    """Spearman rho (Pearson of average ranks) -> (m,) float64."""
    h, M, scalar = _prep(human, metrics)
    return _out(_rowwise(_spearman_rows, h, M), scalar)


def kendall(human, metrics, variant: str = "b", epsilon: float = 0.0):
    """Kendall tau of ``human`` with each metric row -> (m,) float64.

    ``variant``: 'b' (scipy default, tie-corrected), 'c' (Stuart), '23' and 'acc23'
    (Deutsch et al. 2023: ties in both count as agreement). ``epsilon``: a metric difference
    of at most epsilon is a tie ('b', '23', 'acc23'). Computed by
    :func:`mtscore.analysis.kendall_tau.kendall_rows`, the implementation that
    :func:`mtscore.analysis.metaeval.kendall_variant` shares: O(n^2) pairs vectorised over
    metrics, O(n log n) per row for long vectors (n > 3000) without epsilon. 'b' and 'c' are
    clipped to [-1, 1], as scipy does.
    """
    if epsilon < 0:
        raise ValueError("epsilon must be >= 0")
    h, M, scalar = _prep(human, metrics)

    def fn(hh, MM):
        tau = kendall_rows(hh, MM, variant, epsilon, length=h.shape[0])
        return np.clip(tau, -1.0, 1.0) if variant in ("b", "c") else tau
    return _out(_rowwise(fn, h, M), scalar)


def kendall_like(gold, metric, thresh: float = 25.0):
    """WMT DARR 'Kendall-like' tau over all pairs of a vector (as mt-metrics-eval KendallLike).

    Pairs with |gold_i - gold_j| >= thresh count; concordant if the metric orders them the same
    way strictly, otherwise discordant (metric ties and NaN are discordant). Returns
    (tau, n_pairs, concordant, discordant); tau = 0 when there is no pair. The pairs are
    counted by :func:`kendall_like_pairs`.
    """
    g = np.asarray(gold, dtype=np.float64)
    x = np.asarray(metric, dtype=np.float64)
    ok = ~np.isnan(g)
    g, x = g[ok], x[ok]
    iu, ju = np.triu_indices(g.shape[0], k=1)
    dg = g[iu] - g[ju]
    use = np.abs(dg) >= thresh
    # a gold tie (only with thresh <= 0) pairs an item with itself: never concordant
    better = np.where(dg < 0, ju, iu)[use]
    worse = np.where(dg > 0, ju, iu)[use]
    r = kendall_like_pairs(x, better, worse, missing="discordant")
    npairs = r["n"]
    return (r["tau"] if npairs else 0.0), npairs, r["concordant"], r["discordant"]


def kendall_like_pairs(metric_scores, better, worse, missing: str = "drop"):
    """Kendall-like tau (WMT DARR) of each metric row on given pairs: a pair is concordant when the metric scores the
    better translation strictly higher, discordant otherwise (a metric tie is discordant).

    metric_scores (m, N) or (N,) float64 aligned with the DA rows; ``better``/``worse`` (P,)
    int64 row indices. A NaN metric score (metric missing for that translation) drops the pair
    for that metric (``missing='drop'``) or counts it as discordant (``'discordant'``, as
    mt-metrics-eval's KendallLike). Returns dict with ``tau`` (m,) (NaN without pairs), ``n``
    (m,) pairs used, ``concordant`` (m,), ``discordant`` (m,).
    """
    if missing not in ("drop", "discordant"):
        raise ValueError(f"missing={missing!r}: use 'drop' or 'discordant'")
    M = np.asarray(metric_scores, dtype=np.float64)
    scalar = M.ndim == 1
    if scalar:
        M = M[None, :]
    mb, mw = M[:, better], M[:, worse]
    valid = ~(np.isnan(mb) | np.isnan(mw)) if missing == "drop" else np.ones(mb.shape, bool)
    conc = ((mb > mw) & valid).sum(axis=1)
    n = valid.sum(axis=1)
    disc = n - conc
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(n > 0, (conc - disc) / np.maximum(n, 1), np.nan)
    out = {"tau": tau, "n": n, "concordant": conc, "discordant": disc}
    if scalar:
        out = {k: v[0].item() for k, v in out.items()}
    return out


CORRELATIONS: dict[str, Callable] = {"pearson": pearson, "spearman": spearman, "kendall": kendall}


def correlate(human, metrics, method: str = "pearson", **kw):
    """Dispatch to :func:`pearson`, :func:`spearman` or :func:`kendall` by name."""
    try:
        fn = CORRELATIONS[method]
    except KeyError:
        raise ValueError(f"unknown correlation {method!r}; use one of {sorted(CORRELATIONS)}") from None
    return fn(human, metrics, **kw)


def _batched_pearson(H: np.ndarray, M: np.ndarray) -> np.ndarray:
    """H (B, n), M (B, m, n) -> (B, m) Pearson per resample and metric (scale-safe: the
    callers pass vectors normalised by :func:`pow2_normalise`)."""
    Hc = H - H.mean(axis=-1, keepdims=True)
    Mc = M - M.mean(axis=-1, keepdims=True)
    num = np.einsum("bmn,bn->bm", Mc, Hc)
    den = np.sqrt(np.einsum("bmn,bmn->bm", Mc, Mc) * np.einsum("bn,bn->b", Hc, Hc)[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    r[den <= 1e-300] = np.nan
    return r


def bootstrap_ci(human, metrics, method: str = "pearson", n_resamples: int = 1000,
                 alpha: float = 0.05, seed: int | None = 12345, drop_degenerate: bool = True,
                 return_samples: bool = False):
    """Percentile bootstrap CI of a correlation over systems (Mathur 2021 §6.5).

    Resamples the n positions with replacement (the same draw for every metric), computes the
    statistic on each of ``n_resamples`` draws and returns (point (m,), low (m,), high (m,))
    at the ``alpha/2`` and ``1 - alpha/2`` percentiles. Degenerate draws (zero variance -> NaN)
    are dropped when ``drop_degenerate`` (the reference's STD choice); otherwise they make
    the bound NaN. Pearson is fully vectorised (B x m x n); other statistics loop over draws.
    ``return_samples`` adds the (B, m) matrix of resampled statistics.
    """
    h, M, scalar = _prep(human, metrics)
    if np.isnan(M).any():
        raise ValueError("bootstrap_ci: metrics contain NaN; drop incomplete metrics first")
    n = h.shape[0]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    point = correlate(h, M, method)
    if method == "pearson":
        h, M = pow2_normalise(h), pow2_normalise(M)  # exact rescaling: no overflow in the sums
        samples = np.empty((n_resamples, M.shape[0]))
        step = max(1, int(4e6 // max(1, M.shape[0] * n)))
        for a in range(0, n_resamples, step):
            ii = idx[a:a + step]
            samples[a:a + step] = _batched_pearson(h[ii], M[:, ii].transpose(1, 0, 2))
    else:
        samples = np.stack([correlate(h[ii], M[:, ii], method) for ii in idx])
    if drop_degenerate:
        lo = np.nanpercentile(samples, 100 * alpha / 2, axis=0)
        hi = np.nanpercentile(samples, 100 * (1 - alpha / 2), axis=0)
    else:
        lo = np.percentile(samples, 100 * alpha / 2, axis=0)
        hi = np.percentile(samples, 100 * (1 - alpha / 2), axis=0)
    if scalar:
        res = (float(point[0]), float(lo[0]), float(hi[0]))
        return (*res, samples[:, 0]) if return_samples else res
    return (point, lo, hi, samples) if return_samples else (point, lo, hi)


def top_n(human, metrics, min_n: int = 4, method: str = "pearson", ci: bool = False,
          n_resamples: int = 1000, seed: int | None = 12345):
    """Correlation over the top-N systems by human score, for N = n .. min_n (Mathur et al. 2020 §4.1).

    Returns a dict: ``n`` (k,) int, ``r`` (k, m) and, with ``ci``, ``low``/``high`` (k, m)
    percentile bootstrap bounds (Mathur 2021 Fig. 6.7).
    """
    h, M, _ = _prep(human, metrics)
    order = np.argsort(-h, kind="mergesort")
    h, M = h[order], M[:, order]
    ns = np.arange(h.shape[0], min_n - 1, -1)
    out = {"n": ns, "r": np.stack([correlate(h[:k], M[:, :k], method) for k in ns])}
    if ci:
        lows, highs = [], []
        for k in ns:
            _, lo, hi = bootstrap_ci(h[:k], M[:, :k], method, n_resamples, seed=seed)
            lows.append(lo)
            highs.append(hi)
        out["low"], out["high"] = np.stack(lows), np.stack(highs)
    return out


def rolling_window(human, metrics, window: int = 4, method: str = "pearson", ci: bool = False,
                   n_resamples: int = 1000, seed: int | None = 12345):
    """Correlation over windows of ``window`` consecutive systems sorted by human score
    ascending: start k = 0 .. n - window (Mathur et al. 2020 Fig. 1, window 4 or 8).

    Returns a dict: ``start`` (k,) int, ``r`` (k, m) and optionally ``low``/``high``.
    """
    h, M, _ = _prep(human, metrics)
    if window < 3 or window > h.shape[0]:
        raise ValueError(f"window={window} must be in [3, n={h.shape[0]}]")
    order = np.argsort(h, kind="mergesort")
    h, M = h[order], M[:, order]
    starts = np.arange(0, h.shape[0] - window + 1)
    out = {"start": starts,
           "r": np.stack([correlate(h[k:k + window], M[:, k:k + window], method) for k in starts])}
    if ci:
        lows, highs = [], []
        for k in starts:
            _, lo, hi = bootstrap_ci(h[k:k + window], M[:, k:k + window], method, n_resamples, seed=seed)
            lows.append(lo)
            highs.append(hi)
        out["low"], out["high"] = np.stack(lows), np.stack(highs)
    return out
