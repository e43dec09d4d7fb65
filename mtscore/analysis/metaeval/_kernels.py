"""Numba kernels of the meta-evaluation statistics (imported only through :mod:`._jit`).

Conventions shared by every kernel:

* A *grouped* vector is a flat float64 array ``x`` (T,) plus ``offs`` (G+1,) int64: group g is
  ``x[offs[g]:offs[g+1]]`` (a row of the systems x items matrix for ``average_by='sys'``, a
  column for ``'item'``, everything for ``'none'``). Missing entries are already removed.
* Pair outcome codes (human h, metric m, pair i < j inside a group): 0 concordant, 1 discordant,
  2 tied only in h, 3 tied only in m, 4 tied in both.
* Random streams (``mode`` 0 = legacy NumPy MT19937 replay, 1 = xoshiro256**) and NumPy-exact
  means come from :mod:`._kern_base`.
"""
import math

import numpy as np
from numba import njit

from ._kern_base import (  # noqa: F401  (re-exported: used through _jit.kernels())
    mt_coin,
    mt_double,
    mt_doubles,
    mt_twist,
    nanmean_np,
    popcount,
    random_bit,
    seqmean,
    stable_argsort_nonneg,
    temper,
    xs_next,
)


# --------------------------------------------------------------------------- pair outcomes
@njit(cache=True)
def _code(h1, h2, m1, m2, eps):
    dm = m1 - m2
    mt = dm == 0.0 or abs(dm) <= eps
    if h1 == h2:
        return 4 if mt else 2
    if mt:
        return 3
    if (h1 > h2 and dm > 0) or (h1 < h2 and dm < 0):
        return 0
    return 1


@njit(cache=True)
def pair_codes(gold, met, offs, eps):
    """Outcome code of every within-group pair i < j, group-major, row-major -> (P,) int8."""
    total = 0
    for g in range(offs.shape[0] - 1):
        n = offs[g + 1] - offs[g]
        total += n * (n - 1) // 2
    out = np.empty(total, np.int8)
    p = 0
    for g in range(offs.shape[0] - 1):
        b, e = offs[g], offs[g + 1]
        for i in range(b, e):
            for j in range(i + 1, e):
                out[p] = _code(gold[i], gold[j], met[i], met[j], eps)
                p += 1
    return out


@njit(cache=True)
def _variant_value(c, variant, ytie):
    """Kendall variant from counts c (5,): 0 'b', 1 '23', 2 'acc23'. NaN where undefined."""
    tot = c[0] + c[1] + c[2] + c[3] + c[4]
    if variant == 0:
        xtie = c[3] + c[4]
        if xtie == tot or ytie == tot:
            return np.nan
        return (c[0] - c[1]) / np.sqrt(float(tot - xtie)) / np.sqrt(float(tot - ytie))
    if tot == 0:
        return np.nan
    if variant == 1:
        return float(c[0] + c[4] - c[1] - c[2] - c[3]) / float(tot)
    return float(c[0] + c[4]) / float(tot)


@njit(cache=True)
def group_variants(gold, met, offs, eps, variant):
    """Per-group Kendall variant of one metric -> (G,) float64."""
    G = offs.shape[0] - 1
    out = np.empty(G)
    c = np.zeros(5, np.int64)
    for g in range(G):
        c[:] = 0
        b, e = offs[g], offs[g + 1]
        for i in range(b, e):
            for j in range(i + 1, e):
                c[_code(gold[i], gold[j], met[i], met[j], eps)] += 1
        out[g] = _variant_value(c, variant, c[2] + c[4])
    return out


# --------------------------------------------------------------------------- tie calibration
@njit(cache=True)
def _tau_fn(c, acc):
    tot = c[0] + c[1] + c[2] + c[3] + c[4]
    if acc:
        return float(c[0] + c[4]) / float(tot)
    return float(c[0] + c[4] - c[1] - c[2] - c[3]) / float(tot)


@njit(cache=True)
def tie_calibration(gold, met, offs, acc, sample_rate, key, st):
    """Optimal-epsilon search of Deutsch et al. 2023 (the sweep of mt-metrics-eval's
    tau_optimization, same order of float operations). Pairs are kept with probability
    ``sample_rate`` drawn from the legacy stream. Returns (thresholds, taus, best index)."""
    G = offs.shape[0] - 1
    cap = 0
    for g in range(G):
        n = offs[g + 1] - offs[g]
        cap += n * (n - 1) // 2
    diff = np.empty(cap)
    grp = np.empty(cap, np.int64)
    code = np.empty(cap, np.int8)
    np_ = 0
    for g in range(G):
        b, e = offs[g], offs[g + 1]
        for i in range(b, e):
            for j in range(i + 1, e):
                if sample_rate == 1.0 or mt_double(key, st) <= sample_rate:
                    diff[np_] = abs(met[i] - met[j])
                    grp[np_] = g
                    code[np_] = _code(gold[i], gold[j], met[i], met[j], -1.0)
                    np_ += 1
    stats = np.zeros((G, 5), np.int64)
    for p in range(np_):
        stats[grp[p], code[p]] += 1
    nrows = 0
    total = 0.0
    for g in range(G):
        if stats[g].sum() > 0:
            nrows += 1
            total += _tau_fn(stats[g], acc)
    thr = np.empty(np_ + 1)
    taus = np.empty(np_ + 1)
    thr[0] = 0.0
    taus[0] = total / nrows if nrows else np.nan
    nt = 1
    order = stable_argsort_nonneg(diff[:np_])
    for q in range(np_):
        p = order[q]
        g = grp[p]
        total -= _tau_fn(stats[g], acc)
        stats[g, code[p]] -= 1
        stats[g, 4 if (code[p] == 2 or code[p] == 4) else 3] += 1
        total += _tau_fn(stats[g], acc)
        t = total / nrows
        if thr[nt - 1] == diff[p]:
            taus[nt - 1] = t
        else:
            thr[nt] = diff[p]
            taus[nt] = t
            nt += 1
    best = 0
    for i in range(1, nt):
        if taus[i] > taus[best]:
            best = i
    return thr[:nt], taus[:nt], best


# --------------------------------------------------------------------------- pairs permutation
@njit(cache=True)
def _pairs_draw_legacy(c1, c2, offs, poffs, key, st, counts1, counts2):
    pos = st[0]
    for g in range(offs.shape[0] - 1):
        n = offs[g + 1] - offs[g]
        counts1[g, :] = 0
        counts2[g, :] = 0
        p = poffs[g]
        for i in range(n):
            r = 2 * (i + 1)                   # row i of the n x n draw: only j > i is used
            while r > 0:
                if pos >= 624:
                    mt_twist(key)
                    pos = 0
                step = min(r, 624 - pos)
                pos += step
                r -= step
            for _j in range(i + 1, n):
                if pos >= 624:
                    mt_twist(key)
                    pos = 0
                y1 = key[pos]
                pos += 1
                if pos >= 624:
                    mt_twist(key)
                    pos = 0
                y2 = key[pos]
                pos += 1
                a = temper(y1) >> 5          # the double's test u > 0.5, as mt_coin
                coin = a > 67108864 if a != 67108864 else (temper(y2) >> 6) > 0
                if coin:
                    counts1[g, c1[p]] += 1
                    counts2[g, c2[p]] += 1
                else:
                    counts1[g, c2[p]] += 1
                    counts2[g, c1[p]] += 1
                p += 1
    st[0] = pos


@njit(cache=True)
def _pairs_draw_fast(c1, c2, poffs, dpairs, dpoffs, base, xs, buf, counts1, counts2):
    for g in range(poffs.shape[0] - 1):
        counts1[g, :] = base[g]
        counts2[g, :] = base[g]
        for q in range(dpoffs[g], dpoffs[g + 1]):
            p = dpairs[q]
            if random_bit(xs, buf):
                counts1[g, c1[p]] += 1
                counts2[g, c2[p]] += 1
            else:
                counts1[g, c2[p]] += 1
                counts2[g, c1[p]] += 1


@njit(cache=True)
def _differing_pairs(c1, c2, poffs):
    """Fast mode: counts of the pairs whose outcomes agree (G, 5), and the pairs that differ
    (they alone can change under a swap) with their group offsets."""
    G = poffs.shape[0] - 1
    base = np.zeros((G, 5), np.int64)
    dpairs = np.empty(poffs[G], np.int64)
    dpoffs = np.zeros(G + 1, np.int64)
    q = 0
    for g in range(G):
        for p in range(poffs[g], poffs[g + 1]):
            if c1[p] != c2[p]:
                dpairs[q] = p
                q += 1
            else:
                base[g, c1[p]] += 1
        dpoffs[g + 1] = q
    return base, dpairs[:q], dpoffs


@njit(cache=True)
def pairs_permutation(c1, c2, offs, ytie, variant, k, block, early_min, early_max, zero_nan,
                      mode, key, st, xs, quirk):
    """PairwisePermutationSigDiff: swap the pairwise outcomes (codes c1, c2 of metrics 1 and 2)
    of each pair with probability 1/2; statistic = mean over groups of the Kendall variant.
    ``quirk``: check early stopping only after a draw with a large delta (as mt-metrics-eval).
    Returns (count of draws with delta* >= delta, draws used, delta, draws (k, 2) [c2, c1])."""
    G = offs.shape[0] - 1
    poffs = np.zeros(G + 1, np.int64)
    for g in range(G):
        n = offs[g + 1] - offs[g]
        poffs[g + 1] = poffs[g] + n * (n - 1) // 2
    counts1 = np.zeros((G, 5), np.int64)
    counts2 = np.zeros((G, 5), np.int64)
    vals = np.empty(G)
    work = np.empty(G)
    for g in range(G):
        counts1[g, :] = 0
        counts2[g, :] = 0
        for p in range(poffs[g], poffs[g + 1]):
            counts1[g, c1[p]] += 1
            counts2[g, c2[p]] += 1
    for g in range(G):
        vals[g] = _variant_value(counts1[g], variant, ytie[g])
    r1 = nanmean_np(vals, work, zero_nan)
    for g in range(G):
        vals[g] = _variant_value(counts2[g], variant, ytie[g])
    delta = nanmean_np(vals, work, zero_nan) - r1
    base, dpairs, dpoffs = _differing_pairs(c1, c2, poffs)
    buf = np.zeros(2, np.uint64)
    draws = np.empty((k, 2))
    large = 0
    i = 0
    for i in range(1, k + 1):
        if mode == 0:
            _pairs_draw_legacy(c1, c2, offs, poffs, key, st, counts1, counts2)
        else:
            _pairs_draw_fast(c1, c2, poffs, dpairs, dpoffs, base, xs, buf, counts1, counts2)
        for g in range(G):
            vals[g] = _variant_value(counts1[g], variant, ytie[g])
        a = nanmean_np(vals, work, zero_nan)
        for g in range(G):
            vals[g] = _variant_value(counts2[g], variant, ytie[g])
        b = nanmean_np(vals, work, zero_nan)
        large, stop = _tally(draws, i, a, b, delta, large, quirk, block, early_min, early_max)
        if stop:
            break
    return large, i, delta, draws[:i]


@njit(cache=True)
def _tally(draws, i, a, b, delta, large, quirk, block, early_min, early_max):
    """Record draw ``i`` (1-based) of a permutation test: ``draws[i - 1] = (b, a)``, count it
    when ``b - a >= delta``, and say whether the early-stopping rule ends the test here (checked
    every ``block`` draws; with ``quirk``, as mt-metrics-eval, only after a counted draw).
    Returns ``(large, stop)``."""
    draws[i - 1, 0] = b
    draws[i - 1, 1] = a
    hit = b - a >= delta
    if hit:
        large += 1
    stop = False
    if (hit or not quirk) and i % block == 0:
        pv = large / i
        stop = pv < early_min or pv > early_max
    return large, stop


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
                    c[_code(gold[i], gold[j], met[i], met[j], eps)] += 1
            if kind == 1:
                out[g] = _variant_value(c, variant, c[2] + c[4])
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


# --------------------------------------------------------------------------- fast linear pairs test
@njit(cache=True)
def _weight(code, variant):
    """A pair's contribution to the numerator of '23' (variant 1) or 'acc23' (variant 2)."""
    good = code == 0 or code == 4
    if variant == 2:
        return 1 if good else 0
    return 1 if good else -1


@njit(cache=True)
def _linear_masks(c1, c2, offs, variant):
    """Per group: pair count, numerators of metrics 1 and 2; per 64-pair word of the pairs whose
    contributions differ: the pairs where metric 1 adds more (pos) or less (neg), and the group."""
    G = offs.shape[0] - 1
    tot = np.zeros(G, np.int64)
    s1 = np.zeros(G, np.int64)
    s2 = np.zeros(G, np.int64)
    eff = np.zeros(G, np.int64)
    nwords = 0
    p = 0
    for g in range(G):
        n = offs[g + 1] - offs[g]
        tot[g] = n * (n - 1) // 2
        for _ in range(tot[g]):
            w1 = _weight(c1[p], variant)
            w2 = _weight(c2[p], variant)
            s1[g] += w1
            s2[g] += w2
            eff[g] += w1 != w2
            p += 1
        nwords += (eff[g] + 63) // 64
    pos = np.zeros(nwords, np.uint64)
    neg = np.zeros(nwords, np.uint64)
    wgrp = np.empty(nwords, np.int64)
    p = 0
    w = 0
    for g in range(G):
        bit = 0
        for _ in range(tot[g]):
            d = _weight(c1[p], variant) - _weight(c2[p], variant)
            if d != 0:
                if bit == 64:
                    bit = 0
                    w += 1
                if d > 0:
                    pos[w] |= np.uint64(1) << np.uint64(bit)
                else:
                    neg[w] |= np.uint64(1) << np.uint64(bit)
                wgrp[w] = g
                bit += 1
            p += 1
        if bit > 0:
            w += 1
    return tot, s1, s2, pos, neg, wgrp


@njit(cache=True)
def pairs_permutation_linear(c1, c2, offs, variant, k, block, early_min, early_max, zero_nan, xs, quirk):
    """:func:`pairs_permutation` for the linear variants ('23', 'acc23') on the fast stream:
    only pairs whose contributions differ matter, 64 of them per random word (popcounts).
    Same counts as the generic kernel would give for the same bits."""
    G = offs.shape[0] - 1
    tot, s1, s2, pos, neg, wgrp = _linear_masks(c1, c2, offs, variant)
    unit = 1 if variant == 2 else 2
    vals = np.empty(G)
    work = np.empty(G)
    for g in range(G):
        vals[g] = s1[g] / tot[g]
    r1 = nanmean_np(vals, work, zero_nan)
    for g in range(G):
        vals[g] = s2[g] / tot[g]
    delta = nanmean_np(vals, work, zero_nan) - r1
    shift = np.zeros(G, np.int64)
    draws = np.empty((k, 2))
    large = 0
    i = 0
    for i in range(1, k + 1):
        shift[:] = 0
        for q in range(pos.shape[0]):
            r = xs_next(xs)
            shift[wgrp[q]] += popcount(r & pos[q]) - popcount(r & neg[q])
        for g in range(G):
            vals[g] = (s2[g] + unit * shift[g]) / tot[g]
        a = nanmean_np(vals, work, zero_nan)
        for g in range(G):
            vals[g] = (s1[g] - unit * shift[g]) / tot[g]
        b = nanmean_np(vals, work, zero_nan)
        large, stop = _tally(draws, i, a, b, delta, large, quirk, block, early_min, early_max)
        if stop:
            break
    return large, i, delta, draws[:i]


@njit(cache=True)
def swap_mask(n, mode, key, st, xs):
    """One draw of the PERM-BOTH swap mask (n,) bool: True keeps metric 1 in hybrid 1."""
    out = np.empty(n, np.bool_)
    buf = np.zeros(2, np.uint64)
    for t in range(n):
        out[t] = mt_coin(key, st) if mode == 0 else random_bit(xs, buf)
    return out
