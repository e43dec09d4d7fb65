"""Numba kernels of the tests on the metrics' scores (see :mod:`._kernels` for the
conventions): per-group Pearson / Kendall / accuracy, the PERM-BOTH scores permutation and its
swap mask, and the soft pairwise accuracy's p-values."""
import math

import numpy as np
from numba import njit

from ._kern_base import mt_coin, nanmean_np, random_bit
from ._kern_pairs import pair_code, variant_value


# --------------------------------------------------------------------------- scores permutation
@njit(cache=True)
def _pearson(x, y, b, e):
    # scale-safe: both ranges are multiplied by a power of two that brings their largest
    # magnitude into [0.5, 1) (exact, so r on ordinary data is unchanged bit for bit); without
    # it scores near 1e300 overflow the sums of squares and r collapses to 0
    n = e - b
    ax = 0.0
    ay = 0.0
    for i in range(b, e):
        ax = max(ax, abs(x[i]))
        ay = max(ay, abs(y[i]))
    fx = math.ldexp(1.0, -math.frexp(ax)[1]) if 0.0 < ax < np.inf else 1.0
    fy = math.ldexp(1.0, -math.frexp(ay)[1]) if 0.0 < ay < np.inf else 1.0
    mx = 0.0
    my = 0.0
    for i in range(b, e):
        mx += x[i] * fx
        my += y[i] * fy
    mx /= n
    my /= n
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    cx = True
    cy = True
    for i in range(b, e):
        dx = x[i] * fx - mx
        dy = y[i] * fy - my
        sxy += dx * dy
        sxx += dx * dx
        syy += dy * dy
        if x[i] != x[b]:
            cx = False
        if y[i] != y[b]:
            cy = False
    if cx or cy:
        return np.nan
    r = sxy / np.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


@njit(cache=True)
def corr_groups(gold, met, offs, kind, variant, eps, out):
    """Per-group statistic: kind 0 Pearson, 1 Kendall variant (eps), 2 accuracy (pooled,
    out[g] = agreements, used by the caller as a micro average)."""
    c = np.zeros(5, np.int64)
    for g in range(offs.shape[0] - 1):
        b, e = offs[g], offs[g + 1]
        if e - b < 2:
            out[g] = np.nan
            continue
        if kind == 0:
            out[g] = _pearson(gold, met, b, e)
        else:
            c[:] = 0
            for i in range(b, e):
                for j in range(i + 1, e):
                    c[pair_code(gold[i], gold[j], met[i], met[j], eps)] += 1
            if kind == 1:
                out[g] = variant_value(c, variant, c[2] + c[4])
            else:
                out[g] = c[0] + c[4]


@njit(cache=True)
def _stat(gold, met, offs, kind, variant, eps, vals, work, zero_nan, npairs):
    corr_groups(gold, met, offs, kind, variant, eps, vals)
    if kind == 2:
        return vals.sum() / npairs
    return nanmean_np(vals, work, zero_nan)


@njit(cache=True)
def scores_permutation(gold, s1, s2, offs, kind, variant, eps, k, block, early_min, early_max,
                       zero_nan, mode, key, st, xs):
    """PERM-BOTH (Deutsch et al. 2021): swap the two metrics' (z-scored) scores item-wise with
    probability 1/2. Returns (large count, draws used, delta, draws (k, 2) [c2, c1])."""
    G = offs.shape[0] - 1
    n = gold.shape[0]
    npairs = 0
    for g in range(G):
        m = offs[g + 1] - offs[g]
        npairs += m * (m - 1) // 2
    vals = np.empty(G)
    work = np.empty(G)
    delta = (_stat(gold, s2, offs, kind, variant, eps, vals, work, zero_nan, npairs)
             - _stat(gold, s1, offs, kind, variant, eps, vals, work, zero_nan, npairs))
    m1 = np.empty(n)
    m2 = np.empty(n)
    buf = np.zeros(2, np.uint64)
    draws = np.empty((k, 2))
    large = 0
    i = 0
    for i in range(1, k + 1):
        for t in range(n):
            w = mt_coin(key, st) if mode == 0 else random_bit(xs, buf)
            if w:
                m1[t] = s1[t]
                m2[t] = s2[t]
            else:
                m1[t] = s2[t]
                m2[t] = s1[t]
        a = _stat(gold, m1, offs, kind, variant, eps, vals, work, zero_nan, npairs)
        b = _stat(gold, m2, offs, kind, variant, eps, vals, work, zero_nan, npairs)
        draws[i - 1, 0] = b
        draws[i - 1, 1] = a
        if b - a >= delta:
            large += 1
        if i % block == 0:
            pv = large / i
            if pv < early_min or pv > early_max:
                break
    return large, i, delta, draws[:i]


# --------------------------------------------------------------------------- soft pairwise accuracy
@njit(cache=True)
def pairwise_pvalues(partial, sys_scores):
    """p[i, j] (i < j) = share of permutations whose null delta >= the observed delta, in
    float32 like the reference; NaN elsewhere. partial (P, S) float32, sys_scores (S,) float32."""
    P, S = partial.shape
    p = np.full((S, S), np.nan)
    for i in range(S):
        for j in range(i + 1, S):
            t = sys_scores[i] - sys_scores[j]
            c = 0
            for r in range(P):
                if partial[r, i] - partial[r, j] >= t:
                    c += 1
            p[i, j] = c / P
    return p


@njit(cache=True)
def swap_mask(n, mode, key, st, xs):
    """One draw of the PERM-BOTH swap mask (n,) bool: True keeps metric 1 in hybrid 1."""
    out = np.empty(n, np.bool_)
    buf = np.zeros(2, np.uint64)
    for t in range(n):
        out[t] = mt_coin(key, st) if mode == 0 else random_bit(xs, buf)
    return out
