"""DARR: relative-ranking pairs built from segment-level DA, and the WMT Kendall-like tau.

WMT17-20 practice (wmt20-metrics ``seglevel-ken-rr.py`` + ``combine-scores-seg-RR.py``):
for every source segment, every pair of MT systems with a DA score (human "systems" removed,
the first row per (system, segment) kept) forms a pair when their **raw** DA scores differ by
at least 25 points; the higher one is "better". A metric is concordant on a pair when it scores
the better translation strictly higher; anything else (including a metric tie) is discordant.
tau = (C - D) / (C + D), micro-averaged over all pairs of the language pair.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..correlation import kendall_like_pairs

__all__ = ["darr_bootstrap", "darr_kendall", "darr_pairs"]


def darr_pairs(systems: Sequence[str], segments, raw, thresh: float = 25.0,
               exclude_systems: Iterable[str] = (), human_prefix: str | None = "Human"):
    """Build DARR pairs from per-(system, segment) DA rows.

    systems (N,) str, segments (N,) hashable segment ids, raw (N,) raw DA scores (0-100).
    Returns (better (P,), worse (P,)) int64 indices into the input rows, in segment order.
    Rows of systems in ``exclude_systems`` (e.g. outliers) or starting with ``human_prefix``
    are ignored; duplicate (system, segment) rows keep the first occurrence.
    """
    sys_arr = np.asarray(systems, dtype=object)
    raw = np.asarray(raw, dtype=np.float64)
    _seg_codes, seg_idx = np.unique(np.asarray(segments), return_inverse=True)
    excl = set(exclude_systems)
    keep = np.array([(s not in excl) and not (human_prefix and str(s).startswith(human_prefix))
                     for s in sys_arr], dtype=bool)
    keep &= ~np.isnan(raw)
    # first occurrence per (system, segment)
    sys_codes, sys_idx = np.unique(sys_arr.astype(str), return_inverse=True)
    key = seg_idx.astype(np.int64) * (len(sys_codes) + 1) + sys_idx
    rows = np.flatnonzero(keep)
    _, first = np.unique(key[rows], return_index=True)
    rows = np.sort(rows[first])
    # group rows by segment, then all within-segment pairs via a sort + ragged expansion
    order = rows[np.argsort(seg_idx[rows], kind="mergesort")]
    seg_sorted = seg_idx[order]
    n = order.size
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # every within-segment pair (p, q), p < q in sorted position, without a Python loop
    bounds = np.flatnonzero(np.r_[True, seg_sorted[1:] != seg_sorted[:-1], True])
    seg_end = np.repeat(bounds[1:], np.diff(bounds))
    partners = seg_end - np.arange(n) - 1
    P = np.repeat(np.arange(n), partners)
    offs = np.arange(P.size) - np.repeat(np.cumsum(partners) - partners, partners)
    Q = P + 1 + offs
    i1, i2 = order[P], order[Q]
    d = raw[i1] - raw[i2]
    sel = np.abs(d) >= thresh
    i1, i2, d = i1[sel], i2[sel], d[sel]
    better = np.where(d > 0, i1, i2).astype(np.int64)
    worse = np.where(d > 0, i2, i1).astype(np.int64)
    return better, worse


def darr_kendall(metric_scores, better, worse, missing: str = "drop"):
    """Kendall-like tau of each metric row on the DARR pairs ``better``/``worse`` (P,) int64
    (row indices into ``metric_scores`` (m, N) or (N,) float64):
    :func:`mtscore.analysis.correlation.kendall_like_pairs`, which counts them."""
    return kendall_like_pairs(metric_scores, better, worse, missing)


def darr_bootstrap(metric_scores, better, worse, n_resamples: int = 1000, alpha: float = 0.05,
                   seed: int | None = 12345, clusters=None):
    """Percentile bootstrap of the DARR Kendall-like tau, the same draws for every metric.

    ``metric_scores`` (m, N) or (N,) float64; ``better``/``worse`` (P,) int64 row indices (from
    :func:`darr_pairs`). The unit resampled (with replacement, ``n_resamples`` draws of full size):

    * ``clusters=None``: the DARR pairs (Mathur 2021 §2.3.3: 1000 resamples, 95% percentile interval);
    * ``clusters`` (P,) hashable, e.g. each pair's source-segment id: whole clusters, every pair of a
      drawn cluster counted (a cluster bootstrap: the pairs of one source segment share its
      translations, each translation's one DA score sits in several pairs, so the pairs are not
      independent and the pair bootstrap understates the spread).

    Each draw's tau is (C - D) / (C + D) over the drawn pairs. Without clusters, pairs with the same
    concordance pattern across the metrics are pooled and their draw counts taken from one
    multinomial, which has the same distribution as drawing the P pairs one by one (and costs
    O(patterns), not O(P), per draw).

    Returns dict: ``tau`` (m,) (the point estimate, = :func:`darr_kendall`), ``low``/``high`` (m,)
    the ``alpha/2`` / ``1 - alpha/2`` percentiles, ``p_diff`` (m, m): the paired-bootstrap share of
    draws where metric i does NOT beat metric j (one-sided p for "i > j"), ``units`` (int): how many
    units were resampled.
    """
    M = np.atleast_2d(np.asarray(metric_scores, dtype=np.float64))
    better, worse = np.asarray(better, dtype=np.int64), np.asarray(worse, dtype=np.int64)
    if np.isnan(M[:, better]).any() or np.isnan(M[:, worse]).any():
        raise ValueError("darr_bootstrap: metric scores missing for some pairs")
    if better.size == 0:
        raise ValueError("darr_bootstrap: no DARR pairs")
    agree = np.where(M[:, better] > M[:, worse], 1.0, -1.0)  # (m, P) +1 concordant, -1 not
    rng = np.random.default_rng(seed)
    if clusters is None:
        units = better.size
        conc = agree > 0  # (m, P)
        if M.shape[0] <= 62:
            code = (conc.astype(np.int64) << np.arange(M.shape[0], dtype=np.int64)[:, None]).sum(axis=0)
            _, first, mult = np.unique(code, return_index=True, return_counts=True)
            kinds = agree[:, first]  # (m, K)
        else:
            pat, mult = np.unique(conc.T, axis=0, return_counts=True)
            kinds = np.where(pat.T, 1.0, -1.0)
        cnt = rng.multinomial(units, mult / units, size=n_resamples).astype(np.float64)  # (B, K)
        taus = (cnt @ kinds.T) / units  # every draw holds P pairs
    else:
        cl = np.asarray(clusters)
        if cl.shape != better.shape:
            raise ValueError(f"darr_bootstrap: clusters has shape {cl.shape}, the pairs {better.shape}")
        _, unit = np.unique(cl, return_inverse=True)
        units = int(unit.max()) + 1
        sums = np.stack([np.bincount(unit, weights=a, minlength=units) for a in agree])  # (m, G)
        sizes = np.bincount(unit, minlength=units).astype(np.float64)
        taus = np.empty((n_resamples, M.shape[0]))
        step = max(1, int(2e6 // units))
        for s0 in range(0, n_resamples, step):
            k = min(step, n_resamples - s0)
            idx = rng.integers(0, units, size=(k, units)) + (np.arange(k) * units)[:, None]
            cnt = np.bincount(idx.ravel(), minlength=k * units).reshape(k, units).astype(np.float64)
            taus[s0:s0 + k] = (cnt @ sums.T) / (cnt @ sizes)[:, None]
    tau = agree.mean(axis=1)
    lo = np.percentile(taus, 100 * alpha / 2, axis=0)
    hi = np.percentile(taus, 100 * (1 - alpha / 2), axis=0)
    p_diff = (taus[:, :, None] <= taus[:, None, :]).mean(axis=0)
    np.fill_diagonal(p_diff, np.nan)
    return {"tau": tau, "low": lo, "high": hi, "p_diff": p_diff, "units": units}
