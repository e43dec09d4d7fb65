"""Williams test for two dependent correlations sharing the human scores (Mathur 2021 eq. 2.14; Mathur et al. 2020 §2), winner sets.

Naming follows psych::r.test / mt-metrics-eval: r12 = corr(M1, H), r13 = corr(M2, H),
r23 = corr(M1, M2); n = number of systems (or segments). One-sided p from a t distribution
with n - 3 degrees of freedom on |t| (psych computes p from |t|; apply it in the direction of
the larger correlation). Identical metrics (r23 = 1, K = 0) give NaN ("not significant").
"""
from __future__ import annotations

import numpy as np

from ..correlation import pow2_normalise

__all__ = ["WMT_SENTINEL", "williams_matrix", "williams_test", "winners", "wmt_sig_table"]

WMT_SENTINEL = 0.12  # what the WMT tables print for "not significant / not tested"


def williams_test(r12, r13, r23, n, one_sided: bool = True):
    """Williams p-value; broadcasts over array arguments (float64)."""
    from scipy.stats import t as tdist

    r12, r13, r23 = (np.asarray(a, dtype=np.float64) for a in (r12, r13, r23))
    n = np.asarray(n, dtype=np.float64)
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        tnum = (r12 - r13) * np.sqrt((n - 1) * (1 + r23))
        tden = np.sqrt(2 * (n - 1) / (n - 3) * k + rbar ** 2 * (1 - r23) ** 3)
        t = tnum / tden
    p = tdist.sf(np.abs(t), n - 3)
    # identical metrics: r23 = 1 makes K = 0 and t = 0/0; floating point may leave 1 - 1e-16
    p = np.where((n > 3) & (np.abs(1 - r23) > 1e-12), p, np.nan)
    p = p if one_sided else np.minimum(1.0, 2 * p)
    return float(p) if np.ndim(p) == 0 else p


def williams_matrix(human, metrics, one_sided: bool = True, only_better: bool = True):
    """All-pairs Williams p-values for metrics (m, n) against human (n,).

    Returns (r (m,), p (m, m)) where p[i, j] is the p-value for "metric i correlates better
    than metric j" (Pearson). With ``only_better`` (the WMT practice) a cell is tested only
    when r[i] >= r[j] and is NaN otherwise; the diagonal is NaN. Rows with NaN are not allowed
    (drop incomplete metrics first).
    """
    h = np.asarray(human, dtype=np.float64)
    M = np.asarray(metrics, dtype=np.float64)
    if np.isnan(M).any() or np.isnan(h).any():
        raise ValueError("williams_matrix: NaN in scores; drop incomplete metrics/systems first")
    n = h.shape[0]
    # rows normalised by a power of two first: exact, and the covariances cannot overflow
    C = np.corrcoef(pow2_normalise(np.vstack([M, h[None, :]])))
    C = np.clip(C, -1.0, 1.0)
    r = C[:-1, -1]
    rmm = C[:-1, :-1]
    p = williams_test(r[:, None], r[None, :], rmm, n, one_sided)
    p = np.asarray(p, dtype=np.float64)
    np.fill_diagonal(p, np.nan)
    if only_better:
        p = np.where(r[:, None] >= r[None, :], p, np.nan)
        np.fill_diagonal(p, np.nan)
    return r, p


def winners(p, alpha: float = 0.05, nan_beats: bool = False) -> np.ndarray:
    """Metrics that no other metric beats significantly: column j has no p[i, j] <= alpha.

    ``nan_beats=True`` reproduces the WMT20 tables: their code kept a metric only when every
    cell of its column was ``> alpha``, so a NaN cell (an identical twin metric, r23 = 1) also
    removed the flag. Use it on :func:`wmt_sig_table` output, where untested cells are 0.12.
    """
    p = np.asarray(p, dtype=np.float64)
    m = p.shape[0]
    off = ~np.eye(m, dtype=bool)
    beaten = (p <= alpha) & off
    if nan_beats:
        beaten |= np.isnan(p) & off
    return ~beaten.any(axis=0)


def wmt_sig_table(r, p_full, alpha: float = 0.05, sentinel: float = WMT_SENTINEL) -> np.ndarray:
    """The WMT20 ``DA-<lp>-sig*.csv`` layout from r (m,) and the unmasked p (m, m)
    (``williams_matrix(..., only_better=False)``): p where r[i] >= r[j] and p <= alpha, NaN
    where the test is undefined (twin metrics), ``sentinel`` elsewhere and on the diagonal."""
    r = np.asarray(r, dtype=np.float64)
    p = np.asarray(p_full, dtype=np.float64)
    tested = r[:, None] >= r[None, :]
    out = np.full(p.shape, sentinel)
    sig = tested & (p <= alpha)
    out[sig] = p[sig]
    out[tested & np.isnan(p)] = np.nan
    np.fill_diagonal(out, sentinel)
    return out
