"""Kendall's tau from pair outcomes: the one implementation behind
:func:`mtscore.analysis.correlation.kendall` and :func:`mtscore.analysis.metaeval.kendall_variant`.

Every pair of positions i < j has one of five outcomes, coded as in the meta-evaluation kernels:
0 concordant, 1 discordant, 2 tied only in the human scores, 3 tied only in the metric (a metric
difference of at most ``epsilon`` is a tie), 4 tied in both. Their counts, int64 (5,), give every
variant: 'b' (Kendall 1945), 'c' (Stuart 1953), '23' and 'acc23' (Deutsch et al. 2023), by the
formulas of mt-metrics-eval's ``KendallVariants`` (tau-b also in the two other orders of float
operations that the public functions have always used, see :data:`B_ONE_ROOT`).

:func:`variant_value` is the formula; the Numba kernels of :mod:`mtscore.analysis.metaeval`
compile this same function. The counts are exact integers, so whichever counter produced them
(the kernels' loop over pairs, :func:`pair_counts` over all O(n^2) pairs vectorised over metric
rows, or :func:`pair_counts_sorted` in O(n log n) by sorting, Knight 1966) the tau is the same
bit for bit. Plain NumPy: no Numba needed here.
"""
from __future__ import annotations

import numpy as np

__all__ = ["B_HUMAN_FIRST", "B_ONE_ROOT", "LONG", "VARIANT_CODES", "kendall_rows", "pair_counts",
           "pair_counts_sorted", "tau_c", "variant_value"]

# variant name -> code of :func:`variant_value`; 0-2 are computed from the five counts alone
# (the kernels' variants), 'c' (:func:`tau_c`) also needs the number of positions and of
# distinct values
VARIANT_CODES = {"b": 0, "23": 1, "acc23": 2, "c": 3}
# tau-b has one value but three recorded orders of float operations, which can differ in the
# last bit: 0 divides by the root of the metric's untied pairs first (mt-metrics-eval, so
# kendall_variant and every kernel), B_HUMAN_FIRST by the human's first (scipy.stats.kendalltau
# (human, metric): correlation.kendall on long vectors), B_ONE_ROOT by the root of their product
# (correlation.kendall otherwise, whose outputs the command line prints in full)
B_HUMAN_FIRST = 4
B_ONE_ROOT = 5

LONG = 3000  # vectors longer than this are counted in O(n log n) when epsilon is 0


def variant_value(c, variant, ytie):
    """Kendall variant from the counts ``c`` (5,) int64 and ``ytie`` = pairs tied in the human
    scores (c[2] + c[4]); NaN where undefined. ``variant``: 0 'b', 1 '23', 2 'acc23' as
    mt-metrics-eval computes them, or tau-b in another order of float operations
    (:data:`B_HUMAN_FIRST`, :data:`B_ONE_ROOT`; see :data:`VARIANT_CODES`). Written so that
    Numba compiles it unchanged (the meta-evaluation kernels do); in plain Python it gives the
    same float64 bit for bit (IEEE division, product and square root). Numba's on-disk cache
    of the kernels that call it is keyed by their own files: after editing this function,
    clear the ``__pycache__`` of :mod:`mtscore.analysis.metaeval` (or touch its ``_kern_*``
    files)."""
    tot = c[0] + c[1] + c[2] + c[3] + c[4]
    if variant == 0 or variant >= 4:
        xtie = c[3] + c[4]
        if xtie == tot or ytie == tot:
            return np.nan
        if variant == 0:
            return (c[0] - c[1]) / np.sqrt(float(tot - xtie)) / np.sqrt(float(tot - ytie))
        if variant == 4:
            return (c[0] - c[1]) / np.sqrt(float(tot - ytie)) / np.sqrt(float(tot - xtie))
        return (c[0] - c[1]) / np.sqrt(float(tot - xtie) * float(tot - ytie))
    if tot == 0:
        return np.nan
    if variant == 1:
        return float(c[0] + c[4] - c[1] - c[2] - c[3]) / float(tot)
    return float(c[0] + c[4]) / float(tot)


def tau_c(c, n: int, classes: int) -> float:
    """Stuart's tau-c from the counts ``c`` (5,), the number of positions ``n`` and
    ``classes`` = min(distinct human values, distinct metric values); NaN when that is <= 1."""
    if classes <= 1:
        return np.nan
    return float(2.0 * (c[0] - c[1]) / (n ** 2 * (classes - 1) / classes))


def _pair_signs(x: np.ndarray, epsilon: float = 0.0) -> np.ndarray:
    """sign(x_i - x_j) for all i < j along the last axis -> (..., n(n-1)/2) int8; a difference
    of at most ``epsilon`` is 0."""
    n = x.shape[-1]
    iu, ju = np.triu_indices(n, k=1)
    d = x[..., iu] - x[..., ju]
    s = np.sign(d).astype(np.int8)
    if epsilon > 0:
        s[np.abs(d) <= epsilon] = 0
    return s


def pair_counts(h: np.ndarray, M: np.ndarray, epsilon: float = 0.0) -> np.ndarray:
    """Counts of the five pair outcomes of ``h`` (n,) with each row of ``M`` (m, n), float64
    without NaN, from all O(n^2) pairs (chunked over rows to bound memory) -> (m, 5) int64."""
    hs = _pair_signs(h)
    m = M.shape[0]
    out = np.zeros((m, 5), np.int64)
    npairs = hs.shape[0]
    hz = (hs == 0)[None, :]
    chunk = max(1, int(2e7 // max(npairs, 1)))
    for a in range(0, m, chunk):
        ms = _pair_signs(M[a:a + chunk], epsilon)
        prod = ms * hs[None, :]
        mz = ms == 0
        out[a:a + chunk, 0] = (prod > 0).sum(axis=1)
        out[a:a + chunk, 1] = (prod < 0).sum(axis=1)
        out[a:a + chunk, 2] = (~mz & hz).sum(axis=1)
        out[a:a + chunk, 3] = (mz & ~hz).sum(axis=1)
        out[a:a + chunk, 4] = (mz & hz).sum(axis=1)
    return out


def _tied_pairs(new: np.ndarray) -> int:
    """Pairs inside the runs of a sorted vector; ``new`` (n,) bool marks where a run starts."""
    cnt = np.diff(np.r_[np.flatnonzero(new), new.shape[0]])
    return int((cnt * (cnt - 1) // 2).sum())


def _inversions(r: np.ndarray) -> int:
    """Pairs i < j with r[i] > r[j] of the non-negative int64 ranks ``r`` (n,), one bit of the
    ranks at a time from the highest (O(n log n)): inside each group of equal higher bits, a
    0 bit after a 1 bit is an inversion; the group is then split stably by that bit."""
    n = r.shape[0]
    if n < 2:
        return 0
    a = r.astype(np.int64)
    pos = np.arange(n, dtype=np.int64)
    inv = 0
    for b in range(int(a.max()).bit_length() - 1, -1, -1):
        high = a >> (b + 1)  # a is stably sorted by high: groups contiguous, in their first order
        starts = np.flatnonzero(np.r_[True, high[1:] != high[:-1]])
        sizes = np.diff(np.r_[starts, n])
        bit = (a >> b) & 1
        ones = np.cumsum(bit)
        first = bit[starts]
        ones_before = ones - bit - np.repeat(ones[starts] - first, sizes)  # inside the group
        zero = bit == 0
        inv += int(ones_before[zero].sum())
        zeros_in = sizes - (ones[starts + sizes - 1] - ones[starts] + first)
        out = np.empty_like(a)
        out[np.where(zero, pos - ones_before, np.repeat(starts + zeros_in, sizes) + ones_before)] = a
        a = out
    return inv


def pair_counts_sorted(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The counts of :func:`pair_counts` (epsilon 0) of ``h`` (n,) and one metric ``x`` (n,),
    float64 without NaN, in O(n log n) by sorting -> (5,) int64."""
    n = h.shape[0]
    ox = np.argsort(x)
    xnew = np.r_[True, x[ox[1:]] != x[ox[:-1]]]
    xtie = _tied_pairs(xnew)
    rank = np.empty(n, np.int64)
    rank[ox] = np.cumsum(xnew) - 1  # dense ranks of x
    order = ox[np.argsort(h[ox], kind="stable")]  # by h, then x: pairs tied in h are never inversions
    hs, rs = h[order], rank[order]
    hnew = np.r_[True, hs[1:] != hs[:-1]]
    ytie = _tied_pairs(hnew)
    both = _tied_pairs(hnew | np.r_[True, rs[1:] != rs[:-1]])
    dis = _inversions(rs)
    tot = n * (n - 1) // 2
    con = tot - dis - xtie - ytie + both
    return np.array([con, dis, ytie - both, xtie - both, both], np.int64)


def kendall_rows(h: np.ndarray, M: np.ndarray, variant: str = "b", epsilon: float = 0.0,
                 length: int | None = None) -> np.ndarray:
    """Kendall ``variant`` ('b', 'c', '23' or 'acc23') of ``h`` (n,) with each row of ``M``
    (m, n), float64 without NaN -> (m,) float64, not clipped: the statistics of
    :func:`mtscore.analysis.correlation.kendall`. When ``length`` (default n; the caller's
    length before a row's NaN were dropped) exceeds :data:`LONG` and ``epsilon`` is 0, the
    pairs are counted in O(n log n) and tau-b has scipy's order of operations
    (:data:`B_HUMAN_FIRST`); otherwise all pairs are counted and tau-b is :data:`B_ONE_ROOT`."""
    try:
        code = VARIANT_CODES[variant]
    except KeyError:
        raise ValueError(f"unknown Kendall variant {variant!r}; use 'b', 'c', '23' or 'acc23'") from None
    if code == 3 and epsilon > 0:
        raise ValueError("kendall variant 'c' does not support epsilon > 0")
    n = h.shape[0]
    if (n if length is None else length) > LONG and epsilon == 0:
        counts = np.zeros((M.shape[0], 5), np.int64)
        for i, row in enumerate(M):
            counts[i] = pair_counts_sorted(h, row)
        if code == 0:
            code = B_HUMAN_FIRST
    else:
        counts = pair_counts(h, M, epsilon)
        if code == 0:
            code = B_ONE_ROOT
    if code == 3:
        mh = len(np.unique(h))
        return np.array([tau_c(c, n, min(mh, len(np.unique(row)))) for c, row in zip(counts, M)], np.float64)
    return np.array([variant_value(c, code, c[2] + c[4]) for c in counts], np.float64)
