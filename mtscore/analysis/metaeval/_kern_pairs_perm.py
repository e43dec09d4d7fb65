"""Numba kernels of the pairwise permutation test (PairwisePermutationSigDiff, see
:mod:`._kernels` for the conventions): the generic test on pair outcome codes, and the fast
linear one for the '23' / 'acc23' variants on the xoshiro stream (64 pairs per random word)."""
import numpy as np
from numba import njit

from ._kern_base import mt_twist, nanmean_np, popcount, random_bit, temper, xs_next
from ._kern_pairs import variant_value


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
        vals[g] = variant_value(counts1[g], variant, ytie[g])
    r1 = nanmean_np(vals, work, zero_nan)
    for g in range(G):
        vals[g] = variant_value(counts2[g], variant, ytie[g])
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
            vals[g] = variant_value(counts1[g], variant, ytie[g])
        a = nanmean_np(vals, work, zero_nan)
        for g in range(G):
            vals[g] = variant_value(counts2[g], variant, ytie[g])
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
