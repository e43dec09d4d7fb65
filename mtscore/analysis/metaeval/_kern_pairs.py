"""Numba kernels of the pair outcomes (see :mod:`._kernels` for the conventions): the outcome
code of a pair, per-group Kendall variants from the codes (the formula is
:func:`mtscore.analysis.kendall_tau.variant_value`, compiled here), and the tie calibration's
optimal-epsilon search."""
import numpy as np
from numba import njit

from .. import kendall_tau
from ._kern_base import mt_double, stable_argsort_nonneg


# --------------------------------------------------------------------------- pair outcomes
@njit(cache=True)
def pair_code(h1, h2, m1, m2, eps):
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
                out[p] = pair_code(gold[i], gold[j], met[i], met[j], eps)
                p += 1
    return out


# the Kendall variants' one formula (plain Python, shared with correlation.kendall), compiled
variant_value = njit(cache=True)(kendall_tau.variant_value)


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
                c[pair_code(gold[i], gold[j], met[i], met[j], eps)] += 1
        out[g] = variant_value(c, variant, c[2] + c[4])
    return out


# --------------------------------------------------------------------------- tie calibration
@njit(cache=True)
def _tau_fn(c, acc):
    """'acc23' (``acc``) or '23' of a group's counts (never empty here)."""
    return variant_value(c, 2 if acc else 1, 0)


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
                    code[np_] = pair_code(gold[i], gold[j], met[i], met[j], -1.0)
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
