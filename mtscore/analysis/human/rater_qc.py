"""Rater quality control on DA judgement arrays (Graham et al. 2017, NLE §4; Mathur 2021 §3.3.1).

Inputs are parallel arrays, one entry per judgement: ``worker`` (N,) ids, ``item_type`` (N,) in
{SYSTEM, REPEAT, REF, BAD_REF}, ``key`` (N,) (or (N, k)) identifying the original item, ``score``
(N,) float64. Results are dicts of arrays, one entry per worker.

* :func:`qc_paired_ttest` - the WMT paired t-test (``quality-control.R``).
* :func:`qc_ranksum` - the rank-sum rater test of Graham et al. 2017, NLE §4 (normal approximation).
* :func:`qc_repeats` - first vs repeat scores (two-sided signed-rank).
* :func:`red_flags` - the per-worker red flags (scores, constant runs).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .scores import category_codes
from .significance import mann_whitney_greater

__all__ = [
    "qc_paired_ttest",
    "qc_ranksum",
    "qc_repeats",
    "red_flags",
]


def _pairs(worker, item_type, key, score, a_type: str, b_types: Sequence[str]):
    """Match each ``a_type`` judgement to the same worker's judgement of the same ``key``
    whose type is in ``b_types`` (first match). Returns worker codes, names, a and b scores."""
    names, w = category_codes(worker)
    t = np.asarray(item_type).astype(str)
    key = np.asarray(key)
    s = np.asarray(score, dtype=np.float64)
    lut: dict[tuple[int, object], float] = {}
    for i in np.flatnonzero(np.isin(t, list(b_types))):
        lut.setdefault((w[i], key[i] if key.ndim == 1 else tuple(key[i])), s[i])
    ws, sa, sb = [], [], []
    for i in np.flatnonzero(t == a_type):
        k = (w[i], key[i] if key.ndim == 1 else tuple(key[i]))
        if k in lut:
            ws.append(w[i])
            sa.append(s[i])
            sb.append(lut[k])
    return names, np.asarray(ws, np.int64), np.asarray(sa), np.asarray(sb)


def qc_paired_ttest(worker, item_type, key, score, alpha: float = 0.05):
    """WMT rater QC (``quality-control.R``): per worker a one-sided paired t-test that the
    degraded (BAD_REF) items score lower than their originals (SYSTEM), pooled over the
    worker's HITs. ``key`` identifies the original item (e.g. "system|segment|hit").

    Returns dict: worker (k,) names, n_pairs (k,), t (k,), p (k,), passed (k,) bool (p <= alpha;
    NaN p fails). The t statistic is invariant to per-worker z-scoring.
    """
    from scipy.stats import t as tdist

    names, w, bad, orig = _pairs(worker, item_type, key, score, "BAD_REF", ("SYSTEM",))
    k = len(names)
    d = bad - orig
    n = np.bincount(w, minlength=k).astype(np.float64)
    mean = np.bincount(w, d, minlength=k) / np.maximum(n, 1)
    var = np.bincount(w, (d - mean[w]) ** 2, minlength=k) / np.maximum(n - 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / np.sqrt(var / n)
        p = tdist.cdf(t, n - 1)
    p = np.where(n >= 2, p, np.nan)
    passed = np.nan_to_num(p, nan=1.0) <= alpha
    return {"worker": names, "n_pairs": n.astype(np.int64), "t": t, "p": p, "passed": passed}


def qc_ranksum(worker, item_type, key, score, alpha: float = 0.05, absolute_repeat: bool = False):
    """Graham et al. 2017, NLE §4 rater test: one-sided Wilcoxon rank-sum of the repeat-pair
    differences (first - repeat) against the bad-reference differences (original - bad);
    H1: repeat differences are smaller. ``absolute_repeat`` uses |first - repeat|. The p-value
    is the normal approximation (:func:`mann_whitney_greater`) for every worker; R's
    ``wilcox.test`` gives the exact p when both samples have fewer than 50 values and no ties,
    as :func:`mtscore.analysis.human.significance.nle_worker_test` (``mtscore human worker-test``) does.
    Returns dict worker, p, passed (p < alpha)."""
    names, wb, bad, orig = _pairs(worker, item_type, key, score, "BAD_REF", ("SYSTEM",))
    _, wr, rep, first = _pairs(worker, item_type, key, score, "REPEAT", ("SYSTEM",))
    d_bad = orig - bad
    d_rep = first - rep
    if absolute_repeat:
        d_rep = np.abs(d_rep)
    p = np.full(len(names), np.nan)
    for j in range(len(names)):
        a, b = d_rep[wr == j], d_bad[wb == j]
        if len(a) and len(b):
            p[j] = mann_whitney_greater(b, a)
    return {"worker": names, "p": p, "passed": np.nan_to_num(p, nan=1.0) < alpha}


def qc_repeats(worker, item_type, key, score, alpha: float = 0.05):
    """Assumption B: no significant difference between first and repeat scores (two-sided
    Wilcoxon signed-rank per worker). Returns dict worker, p, passed (p >= alpha or untestable)."""
    from scipy.stats import wilcoxon

    names, w, rep, first = _pairs(worker, item_type, key, score, "REPEAT", ("SYSTEM",))
    p = np.full(len(names), np.nan)
    for j in range(len(names)):
        d = first[w == j] - rep[w == j]
        if np.count_nonzero(d) >= 1:
            p[j] = wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue
    return {"worker": names, "p": p, "passed": ~(p < alpha)}


def red_flags(worker, item_type, raw_score, hit=None, adequacy: bool = True, max_run: int = 8):
    """WMT payment red flags (``wrkr-times.R``) from raw scores: ``scores`` if
    mean(BAD_REF) >= mean(SYSTEM) or mean(SYSTEM) >= mean(REF) or (adequacy and mean(REF) < 90);
    ``seq`` if the longest run of identical consecutive scores (in input order) exceeds
    ``max_run``. Returns dict worker, flag_scores, flag_seq, means (k, 3) [bad, sys, ref]."""
    names, w = category_codes(worker)
    t = np.asarray(item_type).astype(str)
    s = np.asarray(raw_score, dtype=np.float64)
    k = len(names)
    means = np.full((k, 3), np.nan)
    for c, typ in enumerate(("BAD_REF", "SYSTEM", "REF")):
        m = t == typ
        cnt = np.bincount(w[m], minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[:, c] = np.bincount(w[m], s[m], minlength=k) / cnt
    fs = (means[:, 0] >= means[:, 1]) | (means[:, 1] >= means[:, 2])
    if adequacy:
        fs |= means[:, 2] < 90
    runs = np.zeros(k, np.int64)
    for j in range(k):
        x = s[w == j]
        if x.size:
            br = np.flatnonzero(np.r_[True, x[1:] != x[:-1], True])
            runs[j] = np.diff(br).max()
    return {"worker": names, "flag_scores": fs, "flag_seq": runs > max_run, "longest_run": runs,
            "means": means}

